/*
 * ollama.c: a model Ollama keeps, by the name `ollama run` takes
 * (NAME[:TAG], [NAMESPACE/]NAME, HOST/NAMESPACE/NAME:TAG): its manifest,
 * manifests/HOST/NAMESPACE/NAME/TAG under the models folder ($OLLAMA_MODELS,
 * else ~/.ollama/models, else the Linux service's
 * /usr/share/ollama/.ollama/models), names the weights as the layer of
 * media type application/vnd.ollama.image.model, a GGUF file kept as
 * blobs/sha256-HEX.  (The blob is not hashed again: it is gigabytes, and
 * Ollama checked it when it was pulled.)
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attnscope/files/fileio.h"
#include "attnscope/files/jsonfile.h"
#include "attnscope/locate/locate.h"

/* What a name means: host, namespace, model and tag ("registry.ollama.ai", "library", ...). */
static bool
parse_name(const char *what, char *host, char *ns, char *name, char *tag, size_t size)
{
    char buf[512];
    char *parts[3];
    int n = 0;
    char *colon, *slash, *at;

    if (strlen(what) >= sizeof buf || what[0] == '\0' || what[0] == '.' || what[0] == '/' ||
        strstr(what, "..") != NULL)
        return false;
    snprintf(buf, sizeof buf, "%s", what);
    colon = strrchr(buf, ':');
    slash = strrchr(buf, '/');
    snprintf(tag, size, "%s", colon != NULL && (slash == NULL || colon > slash) ? colon + 1 : "latest");
    if (colon != NULL && (slash == NULL || colon > slash))
        *colon = '\0';
    for (at = buf; n < 3;) {
        parts[n++] = at;
        if ((at = strchr(at, '/')) == NULL)
            break;
        *at++ = '\0';
    }
    if (at != NULL && n == 3)
        return false; /* more than three parts */
    snprintf(host, size, "%s", n == 3 ? parts[0] : "registry.ollama.ai");
    snprintf(ns, size, "%s", n >= 2 ? parts[n - 2] : "library");
    snprintf(name, size, "%s", parts[n - 1]);
    return name[0] != '\0' && tag[0] != '\0' && ns[0] != '\0' && host[0] != '\0';
}

/* The folders Ollama keeps its models in, in the order it looks. */
static int
roots(char out[3][MODEL_PATH_MAX])
{
    int n = 0;
    const char *env = getenv("OLLAMA_MODELS");
    const char *home = getenv("HOME");

    if (env != NULL && env[0] != '\0')
        snprintf(out[n++], MODEL_PATH_MAX, "%s", env);
    if (home != NULL && home[0] != '\0')
        snprintf(out[n++], MODEL_PATH_MAX, "%s/.ollama/models", home);
    snprintf(out[n++], MODEL_PATH_MAX, "/usr/share/ollama/.ollama/models");
    return n;
}

/* The manifest's layer of that media type's digest (64 hex digits after "sha256:"), into hex. */
static bool
layer_digest(json_t *manifest, const char *media, char hex[65])
{
    json_t *layers = json_object_get(manifest, "layers");

    for (size_t i = 0; json_is_array(layers) && i < json_array_size(layers); i++) {
        json_t *l = json_array_get(layers, i);
        const char *type = json_string_value(json_object_get(l, "mediaType"));
        const char *digest = json_string_value(json_object_get(l, "digest"));
        if (type == NULL || digest == NULL || strcmp(type, media) != 0)
            continue;
        if (strncmp(digest, "sha256:", 7) != 0 || strlen(digest) != 7 + 64 ||
            strspn(digest + 7, "0123456789abcdef") != 64)
            return false;
        memcpy(hex, digest + 7, 65);
        return true;
    }
    return false;
}

/*
 * A number of the params JSON: a JSON number within [lo, hi], whole when
 * it counts something (num_ctx, top_k); 0 when absent, 1, or -1 with err set.
 */
static int
param_number(json_t *root, const char *key, double lo, double hi, bool whole, double *v,
             const char *path, struct attn_error *err)
{
    json_t *j = json_object_get(root, key);

    if (j == NULL || json_is_null(j))
        return 0;
    if (!json_is_number(j) || json_number_value(j) < lo || json_number_value(j) > hi ||
        (whole && json_number_value(j) != floor(json_number_value(j)))) {
        attn_fail(err, ATTN_EPARSE, "%s: %s: give a %s from %.15g to %.15g", path, key,
                  whole ? "whole number" : "number", lo, hi);
        return -1;
    }
    *v = json_number_value(j);
    return 1;
}

/*
 * The params blob (blobs/sha256-HEX, a JSON object) into p: temperature,
 * top_k, top_p, num_ctx and stop (a string or a list of them) are the
 * writing's; the other settings (repeat_penalty, min_p ...) attnscope's
 * sampler has not, and are left.  0, or -1 with err naming the file and key.
 */
static int
read_params(const char *root_dir, const char *hex, struct model_params *p, struct attn_error *err)
{
    char path[MODEL_PATH_MAX + 100];
    json_t *root, *stop;
    double v;
    int got;

    memset(p, 0, sizeof *p);
    if (snprintf(path, sizeof path, "%s/blobs/sha256-%s", root_dir, hex) >= (int)sizeof path)
        return 0;
    if ((root = jsonfile_load(path, JSONFILE_CONFIG_MAX, err)) == NULL)
        return -1;
    if (!json_is_object(root)) {
        json_decref(root);
        attn_fail(err, ATTN_EPARSE, "%s: not an object of parameters (an Ollama params layer)",
                  path);
        return -1;
    }
    if ((got = param_number(root, "temperature", 0.0, 100.0, false, &p->temperature, path, err)) < 0)
        goto bad;
    p->has_temperature = got == 1;
    if ((got = param_number(root, "top_p", 0.0, 1.0, false, &p->top_p, path, err)) < 0)
        goto bad;
    /* (top_p 0 and top_k 0 are Ollama's "off") */
    p->has_top_p = got == 1 && p->top_p > 0.0;
    if ((got = param_number(root, "top_k", 0.0, 1 << 24, true, &v, path, err)) < 0)
        goto bad;
    p->top_k = (int)v;
    p->has_top_k = got == 1 && p->top_k > 0;
    if ((got = param_number(root, "num_ctx", 0.0, 1 << 24, true, &v, path, err)) < 0)
        goto bad;
    p->num_ctx = got == 1 ? (int)v : 0;
    stop = json_object_get(root, "stop");
    for (size_t i = 0; stop != NULL && !json_is_null(stop) &&
                       i < (json_is_array(stop) ? json_array_size(stop) : 1);
         i++) {
        const char *s = json_string_value(json_is_array(stop) ? json_array_get(stop, i) : stop);
        if (s == NULL || s[0] == '\0' || strlen(s) >= sizeof p->stop[0] || p->n_stop == MODEL_STOP_MAX) {
            attn_fail(err, ATTN_EPARSE, "%s: stop: give at most %d strings of at most %zu bytes",
                      path, MODEL_STOP_MAX, sizeof p->stop[0] - 1);
            goto bad;
        }
        snprintf(p->stop[p->n_stop++], sizeof p->stop[0], "%s", s);
    }
    json_decref(root);
    snprintf(p->from, sizeof p->from, "%s", path);
    return 0;
bad:
    json_decref(root);
    memset(p, 0, sizeof *p);
    return -1;
}

int
model_ollama(const char *what, struct model_place *where, struct attn_error *err)
{
    char host[256], ns[256], name[256], tag[256];
    char dirs[3][MODEL_PATH_MAX];
    const int n = roots(dirs);

    if (!parse_name(what, host, ns, name, tag, sizeof host))
        return 1;
    for (int r = 0; r < n; r++) {
        char manifest[MODEL_PATH_MAX + 1200], blob[MODEL_PATH_MAX + 100], hex[65], phex[65];
        struct stat sb;
        json_t *root;
        if (snprintf(manifest, sizeof manifest, "%s/manifests/%s/%s/%s/%s", dirs[r], host, ns,
                     name, tag) >= (int)sizeof manifest ||
            stat(manifest, &sb) != 0)
            continue;
        if ((root = jsonfile_load(manifest, JSONFILE_CONFIG_MAX, err)) == NULL)
            return -1;
        if (!layer_digest(root, "application/vnd.ollama.image.model", hex)) {
            json_decref(root);
            attn_fail(err, ATTN_EPARSE,
                      "%s: no layer of media type application/vnd.ollama.image.model with a "
                      "sha256 digest: not an Ollama model's manifest",
                      manifest);
            return -1;
        }
        /* Its template layer (its chat template, Go's text/template), when it has one. */
        if (layer_digest(root, "application/vnd.ollama.image.template", phex) &&
            snprintf(where->template_path, sizeof where->template_path, "%s/blobs/sha256-%s",
                     dirs[r], phex) >= (int)sizeof where->template_path)
            where->template_path[0] = '\0';
        /* Its params layer (the Modelfile's PARAMETER lines), when it has one. */
        if (layer_digest(root, "application/vnd.ollama.image.params", phex) &&
            read_params(dirs[r], phex, &where->params, err) != 0) {
            json_decref(root);
            return -1;
        }
        json_decref(root);
        if (snprintf(blob, sizeof blob, "%s/blobs/sha256-%s", dirs[r], hex) >= (int)sizeof blob ||
            (stat(blob, &sb) != 0 && errno == ENOENT && fileio_absent(blob))) {
            attn_fail(err, ATTN_EIO, "%s names the weights %s, which is not there (pull it again: "
                                     "`ollama pull %s`)",
                      manifest, blob, what);
            return -1;
        }
        {
            /* There, but what (a FIFO, a folder, a device, a link to nothing): said, never
               opened in a way that could block. */
            struct attn_error why;
            int fd;
            if (fileio_open_regular(blob, &fd, &why) != ATTN_OK) {
                attn_fail(err, ATTN_EIO, "%s names the weights %s (pull it again: `ollama pull %s`)",
                          manifest, why.msg, what);
                return -1;
            }
            close(fd);
        }
        if (snprintf(where->weights, sizeof where->weights, "%s", blob) >=
                (int)sizeof where->weights ||
            snprintf(where->dir, sizeof where->dir, "%s/blobs", dirs[r]) >= (int)sizeof where->dir ||
            snprintf(where->name, sizeof where->name, "%.120s:%.120s", name, tag) < 0) {
            attn_fail(err, ATTN_EIO, "%s: the path is too long", blob);
            return -1;
        }
        return 0;
    }
    return 1;
}

int
model_ollama_looked(const char *what, char *buf, size_t size, char *first, size_t first_size)
{
    char host[256], ns[256], name[256], tag[256];
    char dirs[3][MODEL_PATH_MAX];
    const int n = roots(dirs);
    size_t at = 0;
    int tags = 0;

    buf[0] = '\0';
    first[0] = '\0';
    if (!parse_name(what, host, ns, name, tag, sizeof host))
        return 0;
    attn_appendf(buf, size, &at, "Ollama's folders (");
    for (int r = 0; r < n; r++)
        attn_appendf(buf, size, &at, "%s%s%s", r > 0 ? ", " : "",
                     r == 0 && getenv("OLLAMA_MODELS") != NULL && getenv("OLLAMA_MODELS")[0] != '\0'
                         ? "OLLAMA_MODELS="
                         : "",
                     dirs[r]);
    attn_appendf(buf, size, &at, ")");
    /* The tags each folder has of that name: what `ollama list` would show of it. */
    for (int r = 0; r < n; r++) {
        char folder[MODEL_PATH_MAX + 1024];
        DIR *d;
        struct dirent *e;
        if (snprintf(folder, sizeof folder, "%s/manifests/%s/%s/%s", dirs[r], host, ns, name) >=
                (int)sizeof folder ||
            (d = opendir(folder)) == NULL)
            continue;
        while ((e = readdir(d)) != NULL)
            if (e->d_name[0] != '.') {
                if (tags == 0)
                    snprintf(first, first_size, "%.120s:%.120s", name, e->d_name);
                attn_appendf(buf, size, &at, "%s%s:%s", tags++ == 0 ? " have " : ", ", name,
                             e->d_name);
            }
        closedir(d);
    }
    if (tags == 0)
        attn_appendf(buf, size, &at, " have no %s (`ollama pull %s` fetches it)", name, what);
    else
        attn_appendf(buf, size, &at, ", not %s:%s", name, tag);
    return tags;
}

/* LM Studio's models folders, in the order it uses them. */
static int
lmstudio_roots(char out[2][MODEL_PATH_MAX])
{
    const char *home = getenv("HOME");
    int n = 0;

    if (home == NULL || home[0] == '\0')
        return 0;
    snprintf(out[n++], MODEL_PATH_MAX, "%s/.lmstudio/models", home);
    snprintf(out[n++], MODEL_PATH_MAX, "%s/.cache/lm-studio/models", home);
    return n;
}

int
model_lmstudio(const char *what, struct model_place *where, char *looked, size_t looked_size,
               struct attn_error *err)
{
    char dirs[2][MODEL_PATH_MAX];
    const int n = lmstudio_roots(dirs);
    size_t at = 0;
    const char *slash = strchr(what, '/');

    looked[0] = '\0';
    /* publisher/model: a folder of GGUF files, one per quantization */
    if (slash == NULL || slash == what || strchr(slash + 1, '/') != NULL || slash[1] == '\0' ||
        strstr(what, "..") != NULL)
        return 1;
    attn_appendf(looked, looked_size, &at, "LM Studio's folders (");
    for (int r = 0; r < n; r++)
        attn_appendf(looked, looked_size, &at, "%s%s", r > 0 ? ", " : "", dirs[r]);
    attn_appendf(looked, looked_size, &at, "%s)", n == 0 ? "none: HOME is not set" : "");
    for (int r = 0; r < n; r++) {
        char folder[MODEL_PATH_MAX + 512], found[256] = "", names[512] = "";
        size_t nat = 0;
        int ggufs = 0;
        DIR *d;
        struct dirent *e;
        if (snprintf(folder, sizeof folder, "%s/%s", dirs[r], what) >= (int)sizeof folder ||
            (d = opendir(folder)) == NULL)
            continue;
        while ((e = readdir(d)) != NULL) {
            const size_t len = strlen(e->d_name);
            if (e->d_name[0] == '.' || len < 5 || strcmp(e->d_name + len - 5, ".gguf") != 0 ||
                strncmp(e->d_name, "mmproj", 6) == 0) /* (a vision projector, not the model) */
                continue;
            if (ggufs++ == 0)
                snprintf(found, sizeof found, "%s", e->d_name);
            attn_appendf(names, sizeof names, &nat, "%s%s", ggufs > 1 ? ", " : "", e->d_name);
        }
        closedir(d);
        if (ggufs == 0) {
            attn_fail(err, ATTN_EIO, "--model %s: %s holds no .gguf file (LM Studio's download "
                                     "is not there)", what, folder);
            return -1;
        }
        if (ggufs > 1) {
            attn_fail(err, ATTN_EVALUE, "--model %s: %s holds %d quantizations (%s): name one, "
                                        "--model %s/FILE.gguf",
                      what, folder, ggufs, names, folder);
            return -1;
        }
        if (snprintf(where->weights, sizeof where->weights, "%s/%s", folder, found) >=
                (int)sizeof where->weights ||
            snprintf(where->dir, sizeof where->dir, "%s", folder) >= (int)sizeof where->dir) {
            attn_fail(err, ATTN_EIO, "%s: the path is too long", folder);
            return -1;
        }
        snprintf(where->name, sizeof where->name, "%.200s", slash + 1);
        return 0;
    }
    return 1;
}
