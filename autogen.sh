#!/bin/sh
# Regenerates configure and Makefile.in from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
mkdir -p m4
autoreconf --force --install --warnings=all
