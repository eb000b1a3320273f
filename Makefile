# SPDX-License-Identifier: Apache-2.0
# mod_resourcesync - build, test and run.
#
#   make deps       install the Debian packages needed (idempotent)
#   make            build build/mod_resourcesync.so
#   make test       engine unit tests (Check), a short run of every fuzz
#                   harness, the Apache::Test suite, then unit tests and
#                   Apache::Test again under AddressSanitizer (make test-asan)
#   make test-asan  the same suite with the module under AddressSanitizer
#   make fuzz       libFuzzer harnesses (fuzz/) into build-fuzz/
#   make fuzz-run   run each harness FUZZ_SECONDS (default 10) on its corpus
#   make run        httpd on 127.0.0.1 with the module on an example tree
#   make bench      benchmarks (see docs/BENCHMARKS.md)
#   make install    module into apxs' LIBEXECDIR, rs-tool into $(BINDIR), its man
#                   page, Debian-style .load/.conf into $(DESTDIR)/etc/apache2/
#                   mods-available (an existing .conf is kept: new one as .conf.dist)
#   make deb        Debian package into build/ (debhelper; see debian/)

APXS      ?= apxs
CC        ?= gcc
BUILD     ?= build
SAN       ?=
SAN_SO    ?=
OPT       ?= -O2
PKGS      = apache2-bin apache2-dev libapr1-dev libaprutil1-dev libaprutil1-dbd-sqlite3 libsqlite3-dev \
            postgresql libaprutil1-dbd-pgsql libpq-dev \
            libxml2-dev libxml2-utils libssl-dev libzip-dev libcurl4-openssl-dev \
            libapache2-mod-perl2 check pkg-config sqlite3 wrk libclang-rt-14-dev clang \
            libwww-perl libxml-libxml-perl faketime libfaketime python3 \
            debhelper dpkg-dev groff-base clang-format

HTTPD_INC := $(shell $(APXS) -q INCLUDEDIR 2>/dev/null)
APR_CFLAGS := $(shell apr-1-config --cppflags --includes 2>/dev/null) \
              $(shell apu-1-config --includes 2>/dev/null)
XML_CFLAGS := $(shell pkg-config --cflags libxml-2.0 2>/dev/null)
PQ_CFLAGS  := -I$(shell pg_config --includedir 2>/dev/null || echo /usr/include/postgresql)

# One version for the module and rs-tool (the module logs it at startup).
VERSION   := $(shell cat VERSION)

CFLAGS_ALL = -DRS_VERSION='"$(VERSION)"' $(OPT) -g -fPIC -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
             -std=gnu11 -I$(HTTPD_INC) $(APR_CFLAGS) $(XML_CFLAGS) $(PQ_CFLAGS) $(patsubst %,-Isrc/%,$(SRC_DIRS)) $(SAN) $(CFLAGS)
LIBS       = -lcurl -lzip -lxml2 -lcrypto -lsqlite3 -lpq -laprutil-1 -lapr-1

# The sources, by folder (docs/ARCHITECTURE.md, "Layout"): the engine's
# units (rs_*.c, APR only) in every folder, the httpd glue
# (mod_resourcesync*.c) in httpd/ (both processes), serve/ (children) and
# watcher/ (the watcher process).
SRC_DIRS   = base store scan lists dumps notify watcher httpd serve
ENGINE_SRC = $(sort $(wildcard $(patsubst %,src/%/rs_*.c,$(SRC_DIRS))))
GLUE_SRC   = mod_resourcesync.c $(sort $(wildcard $(patsubst %,src/%/mod_resourcesync_*.c,$(SRC_DIRS))))
ENGINE_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(ENGINE_SRC))
GLUE_OBJ   = $(patsubst %.c,$(BUILD)/%.o,$(GLUE_SRC))
UNIT_SRC   = $(wildcard t/unit/*.c)
HEADERS    = $(wildcard src/*/*.h)

.PHONY: all deps test test-unit test-fuzz test-httpd test-asan fuzz fuzz-bins fuzz-run run bench \
        clean install deb format format-check

all: $(BUILD)/mod_resourcesync.so $(BUILD)/rs-tool

$(BUILD)/%.o: %.c $(HEADERS) VERSION
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/mod_resourcesync.so: $(GLUE_OBJ) $(ENGINE_OBJ)
	$(CC) -shared $(SAN) $(SAN_SO) -o $@ $^ $(LIBS)

# Command-line front end of the engine (used by benchmarks and tests).
TOOL_SRC   = tools/rs_tool.c tools/rs_tool_state.c tools/rs_tool_forget.c tools/rs_tool_verify.c \
             tools/rs_tool_owner.c tools/rs_tool_withdraw.c tools/rs_tool_err.c tools/rs_tool_statedir.c
$(BUILD)/tools/%.o: tools/%.c $(wildcard tools/*.h) $(HEADERS) VERSION
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/rs-tool: $(patsubst %.c,$(BUILD)/%.o,$(TOOL_SRC)) $(ENGINE_OBJ)
	$(CC) $(SAN) -o $@ $^ $(LIBS)

$(BUILD)/unit-tests: $(UNIT_SRC) $(ENGINE_OBJ)
	$(CC) $(CFLAGS_ALL) -o $@ $(UNIT_SRC) $(ENGINE_OBJ) $(LIBS) $$(pkg-config --libs check)

deps:
	@missing=""; for p in $(PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	else echo "all packages present"; fi

test: format-check test-unit test-fuzz test-httpd test-asan

# The C style (.clang-format: httpd's, lines of up to 100 columns) of every
# C file in git; format-check fails on a file that differs from it and
# names it, format rewrites them.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(FORMAT_FILES)

format-check:
	@command -v clang-format >/dev/null || { echo "format-check: no clang-format (make deps)"; exit 1; }
	@bad=$$(for f in $(FORMAT_FILES); do \
	    clang-format --dry-run --Werror "$$f" >/dev/null 2>&1 || echo "  $$f"; done); \
	if [ -n "$$bad" ]; then echo "not formatted as .clang-format says (make format):"; \
	    echo "$$bad"; exit 1; fi

# The unit tests run on a private PostgreSQL cluster too (t/pgcluster run
# sets RS_TEST_PG): the store's suites run again on it, and the runner
# fails when they cannot (RS_TEST_PG_REQUIRED).  Under AddressSanitizer
# they run on SQLite only: the PostgreSQL paths run under it in the
# module (t/store-pgsql.t), and the suite keeps within its time.
test-unit: $(BUILD)/unit-tests
	RS_TEST_PG_REQUIRED=1 t/pgcluster run t/unit-run $(BUILD)/unit-tests

# libFuzzer harnesses: the engine built again with clang, ASan and UBSan
# (fuzzer-no-link), each harness linked with the libFuzzer driver.  See
# docs/TESTING.md, "Fuzzing".
FUZZ_BUILD     ?= build-fuzz
FUZZ_HARNESSES  = request config loc time snapinfo history mounts hubreq zipname links
FUZZ_SAN        = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                  -fno-omit-frame-pointer
FUZZ_SECONDS   ?= 10
FUZZ_PARALLEL  ?= 1
# The test suite's second and third builds (fuzz, ASan) compile this many
# files at a time, and its fuzz run runs as many harnesses at a time: the
# machine's processors (the builds and harnesses are all that runs then).
BUILD_JOBS     ?= $(shell nproc 2>/dev/null || echo 1)

fuzz:
	$(MAKE) -j$(BUILD_JOBS) BUILD=$(FUZZ_BUILD) CC=clang OPT=-O1 SAN="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" \
	    CFLAGS=-Wno-null-pointer-subtraction fuzz-bins

fuzz-bins: $(patsubst %,$(BUILD)/fuzz_%,$(FUZZ_HARNESSES))

$(BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(ENGINE_OBJ)
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer -o $@ $< $(ENGINE_OBJ) $(LIBS)

fuzz-run: fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_PARALLEL=$(FUZZ_PARALLEL) FUZZ_BUILD=$(FUZZ_BUILD) \
	    fuzz/run $(FUZZ_HARNESSES)

test-fuzz:
	$(MAKE) FUZZ_SECONDS=5 FUZZ_PARALLEL=$(BUILD_JOBS) fuzz-run

test-httpd: all
	t/run-tests $(BUILD)/mod_resourcesync.so

test-asan:
	$(MAKE) -j$(BUILD_JOBS) BUILD=build-asan CC=clang SAN="-fsanitize=address -fno-omit-frame-pointer" \
	    SAN_SO=-shared-libasan OPT=-O1 CFLAGS=-Wno-null-pointer-subtraction all build-asan/unit-tests
	RS_TEST_PG_REQUIRED=0 RS_TEST_PG= t/unit-run build-asan/unit-tests
	RS_ASAN=1 t/run-tests build-asan/mod_resourcesync.so

run: all
	conf/run-example

bench: all
	bench/run

LIBEXECDIR := $(shell $(APXS) -q LIBEXECDIR 2>/dev/null)
PREFIX     ?= /usr
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
CONFDIR    ?= /etc/apache2/mods-available
# An existing resourcesync.conf may hold the operator's edits: it is never
# overwritten; the new one is installed beside it as resourcesync.conf.dist.
install: all
	install -d $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(CONFDIR) $(DESTDIR)$(BINDIR) \
	    $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(BUILD)/mod_resourcesync.so $(DESTDIR)$(LIBEXECDIR)/
	install -m 755 $(BUILD)/rs-tool $(DESTDIR)$(BINDIR)/
	install -m 644 docs/rs-tool.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 conf/resourcesync.load $(DESTDIR)$(CONFDIR)/
	if [ -e $(DESTDIR)$(CONFDIR)/resourcesync.conf ]; then \
	    install -m 644 conf/resourcesync.conf $(DESTDIR)$(CONFDIR)/resourcesync.conf.dist; \
	    echo "kept $(DESTDIR)$(CONFDIR)/resourcesync.conf; new one: resourcesync.conf.dist"; \
	else install -m 644 conf/resourcesync.conf $(DESTDIR)$(CONFDIR)/; fi

# Debian package (debhelper, debian/): build/libapache2-mod-resourcesync_<version>_<arch>.deb.
# dpkg-buildpackage writes its results to the parent directory; they are moved to build/.
deb:
	@v=$$(dpkg-parsechangelog -S Version); [ "$$v" = "$(VERSION)" ] || \
	    { echo "debian/changelog is at $$v, VERSION is $(VERSION): add a changelog entry"; exit 1; }
	rm -f ../libapache2-mod-resourcesync_$(VERSION)*
	dpkg-buildpackage -b -us -uc -j2
	@mkdir -p $(BUILD)
	mv ../libapache2-mod-resourcesync*_$(VERSION)_*.deb $(BUILD)/
	rm -f ../libapache2-mod-resourcesync_$(VERSION)_*.buildinfo \
	    ../libapache2-mod-resourcesync_$(VERSION)_*.changes
	@ls $(BUILD)/*.deb

clean:
	rm -rf build build-asan build-fuzz build-deb debian/.debhelper debian/libapache2-mod-resourcesync t/logs t/state t/conf/httpd.conf t/conf/apache_test_config.pm \
	    t/conf/extra.conf t/conf/rs-module.conf t/conf/htpasswd t/htdocs/generated t/aliased
