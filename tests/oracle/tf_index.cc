// tf_index.cc: writes a TensorFlow checkpoint's index with LevelDB's own
// table writer (leveldb::TableBuilder, Debian's libleveldb-dev), for the
// fixtures tests/oracle/format_fixtures.py makes.  A TensorFlow index is a
// table in LevelDB's format holding plain keys (a LevelDB database's tables
// hold internal keys instead, so a database would not do).
//
// attnscope's own code, never built by `make` or run by `make check`:
//
//     g++ -O2 -o tf_index tests/oracle/tf_index.cc -lleveldb
//     tf_index OUT BLOCK_SIZE RESTART_INTERVAL none|snappy < entries
//     tf_index crc DATA < ranges
//
// The entries come on standard input, in key order, each as a 4-byte
// little-endian key length, the key, a 4-byte value length and the value.
// The second form prints, for each line "OFFSET SIZE" of standard input,
// the masked CRC-32C of those bytes of DATA, as a checkpoint's entry keeps
// it (for writing large checkpoints faster than Python computes CRCs).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <leveldb/env.h>
#include <leveldb/options.h>
#include <leveldb/status.h>
#include <leveldb/table_builder.h>

static bool
read_u32(uint32_t *v)
{
    unsigned char b[4];

    if (std::fread(b, 1, 4, stdin) != 4)
        return false;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return true;
}

static bool
read_bytes(std::string *s, uint32_t n)
{
    s->resize(n);
    return n == 0 || std::fread(&(*s)[0], 1, n, stdin) == n;
}

// CRC-32C (Castagnoli, reflected 0x82f63b78) a byte at a time, and LevelDB's mask.
static uint32_t
crc32c(const unsigned char *p, size_t n)
{
    static uint32_t table[256];
    uint32_t c = 0xffffffffu;

    if (table[1] == 0)
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t k = i;
            for (int b = 0; b < 8; b++)
                k = k & 1 ? (k >> 1) ^ 0x82f63b78u : k >> 1;
            table[i] = k;
        }
    while (n-- > 0)
        c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
    return ~c;
}

static int
print_crcs(const char *path)
{
    FILE *f = std::fopen(path, "rb");
    unsigned long long offset, size;

    if (f == nullptr) {
        std::perror(path);
        return 1;
    }
    while (std::scanf("%llu %llu", &offset, &size) == 2) {
        std::string buf(size, '\0');
        if (std::fseek(f, (long)offset, SEEK_SET) != 0 ||
            (size > 0 && std::fread(&buf[0], 1, size, f) != size)) {
            std::fprintf(stderr, "tf_index: %s: cannot read %llu bytes at %llu\n", path, size,
                         offset);
            return 1;
        }
        uint32_t c = crc32c((const unsigned char *)buf.data(), buf.size());
        std::printf("%u\n", ((c >> 15) | (c << 17)) + 0xa282ead8u);
    }
    std::fclose(f);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc == 3 && std::strcmp(argv[1], "crc") == 0)
        return print_crcs(argv[2]);
    if (argc != 5) {
        std::fprintf(stderr, "usage: tf_index OUT BLOCK_SIZE RESTART_INTERVAL none|snappy\n");
        return 2;
    }
    leveldb::Options options;
    options.block_size = (size_t)std::atol(argv[2]);
    options.block_restart_interval = std::atoi(argv[3]);
    options.compression =
        std::strcmp(argv[4], "snappy") == 0 ? leveldb::kSnappyCompression : leveldb::kNoCompression;
    leveldb::WritableFile *file = nullptr;
    leveldb::Status s = leveldb::Env::Default()->NewWritableFile(argv[1], &file);
    if (!s.ok()) {
        std::fprintf(stderr, "tf_index: %s\n", s.ToString().c_str());
        return 1;
    }
    leveldb::TableBuilder builder(options, file);
    uint32_t klen;
    int count = 0;
    while (read_u32(&klen)) {
        std::string key, value;
        uint32_t vlen;
        if (!read_bytes(&key, klen) || !read_u32(&vlen) || !read_bytes(&value, vlen)) {
            std::fprintf(stderr, "tf_index: a truncated entry on standard input\n");
            return 1;
        }
        builder.Add(key, value);
        count++;
    }
    s = builder.Finish();
    if (s.ok())
        s = file->Close();
    delete file;
    if (!s.ok()) {
        std::fprintf(stderr, "tf_index: %s\n", s.ToString().c_str());
        return 1;
    }
    std::fprintf(stderr, "tf_index: %s: %d entries\n", argv[1], count);
    return 0;
}
