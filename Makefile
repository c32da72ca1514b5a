# profreg build. `make` builds bin/profreg; `make test` and `make demo`
# install missing Debian packages first, so each works on a fresh machine.

PKGS := gsl libpq libcurl jansson yajl libgit2 libzstd zlib libprotobuf-c libcrypto expat \
	libarchive libbpf libmicrohttpd
TEST_PKGS := cmocka

BUILD ?= build
BIN ?= bin
PREFIX ?= /usr/local
SAN ?=

OPT ?= -O2
CFLAGS ?= $(OPT) -g
ifneq ($(SAN),)
  CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=address,undefined
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
# Libraries few commands use: profreg loads them on first use
# (common/lazylib.h), by the soname of the library it was built against,
# so that every other command starts without them and their dependencies.
# A command that only reads the database loads libpq (and what libpq
# needs), libcrypto, libm and libc. The tests, benchmarks and fuzzers
# link them as before.
LAZY_PKGS := libcurl libgit2 libarchive libbpf libmicrohttpd gsl libzstd zlib libprotobuf-c \
	expat yajl jansson
BIN_LIBS := $(shell pkg-config --libs $(filter-out $(LAZY_PKGS),$(PKGS)) 2>/dev/null) -lm -pthread
# The library pkg-config names, else the one the compiler finds (libzstd's
# .pc file gives /usr/lib on Debian, where the library is not).
soname = $(shell for f in "$$(pkg-config --variable=libdir $(1))/lib$(2).so" \
	"$$($(CC) -print-file-name=lib$(2).so)"; do \
	objdump -p "$$f" 2>/dev/null | sed -n 's/^ *SONAME *//p' | grep . && break; done)
LAZY_SONAMES := -DLAZY_SONAME_CURL='"$(call soname,libcurl,curl)"' \
	-DLAZY_SONAME_GIT2='"$(call soname,libgit2,git2)"' \
	-DLAZY_SONAME_ARCHIVE='"$(call soname,libarchive,archive)"' \
	-DLAZY_SONAME_BPF='"$(call soname,libbpf,bpf)"' \
	-DLAZY_SONAME_MHD='"$(call soname,libmicrohttpd,microhttpd)"' \
	-DLAZY_SONAME_GSL='"$(call soname,gsl,gsl)"' \
	-DLAZY_SONAME_ZSTD='"$(call soname,libzstd,zstd)"' \
	-DLAZY_SONAME_ZLIB='"$(call soname,zlib,z)"' \
	-DLAZY_SONAME_PROTOBUF='"$(call soname,libprotobuf-c,protobuf-c)"' \
	-DLAZY_SONAME_EXPAT='"$(call soname,expat,expat)"' \
	-DLAZY_SONAME_YAJL='"$(call soname,yajl,yajl)"' \
	-DLAZY_SONAME_JANSSON='"$(call soname,jansson,jansson)"'

TEST_CFLAGS := $(shell pkg-config --cflags $(TEST_PKGS) 2>/dev/null)
TEST_LIBS := $(shell pkg-config --libs $(TEST_PKGS) 2>/dev/null)

ALL_CFLAGS = -std=c11 -Wall -Wextra -Werror -MMD -MP -I. -I$(BUILD)/gen \
	$(PKG_CFLAGS) -pthread $(CFLAGS)
LIBS = $(PKG_LIBS) -lm -pthread

VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
# The top-level targets build with one compiler a CPU.
NPROC := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)

# Everything but the CLI entry point goes into one static library that the
# binary, the tests, the fuzzers and the benchmarks link against.
LIB_SRC := $(filter-out jobs/cli/main.c,$(wildcard common/*.c pipeline/*.c \
	stats/*.c baselines/*.c reports/*.c jobs/*.c jobs/cli/*.c))
PROTO := $(wildcard pipeline/*.proto)
GEN_SRC := $(PROTO:%.proto=$(BUILD)/gen/%.pb-c.c)
GEN_HDR := $(PROTO:%.proto=$(BUILD)/gen/%.pb-c.h)
SQL := $(sort $(wildcard pipeline/migrations/*.sql))
SQL_C := $(BUILD)/gen/migrations.c
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_SRC:%.c=%.o) $(SQL_C:%.c=%.o)
LIB := $(BUILD)/libprofreg.a

TEST_SRC := $(wildcard tests/unit/test_*.c)
TEST_BIN := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
TEST_SUPPORT := $(wildcard tests/support/*.c)
TEST_SUPPORT_OBJ := $(TEST_SUPPORT:%.c=$(BUILD)/%.o)

# Small loopback servers the tests talk to (one .c file each, libc and
# jansson only; profiler_server and s3_sigcheck have their own rules below).
SERVER_SRC := $(wildcard tests/servers/*.c)
SERVER_BIN := $(SERVER_SRC:tests/servers/%.c=$(BUILD)/servers/%)

BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)

.PHONY: check-build all deps test check asan demo bench eval fuzz clang-check install man clean
all: $(BIN)/profreg

deps:
	@scripts/install-deps

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: %.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen $<

# The list of migration files, rewritten only when it changes: a file
# removed (another branch checked out) leaves no newer prerequisite, and
# the binary would carry a migration the tree no longer has.
$(BUILD)/gen/migrations.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(SQL)' | cmp -s - $@ || echo '$(SQL)' > $@

$(SQL_C): $(SQL) $(BUILD)/gen/migrations.list scripts/sql2c
	@mkdir -p $(dir $@)
	scripts/sql2c $(SQL) > $@.tmp && mv $@.tmp $@

FORCE:

# Every object may include the generated protobuf header.
$(LIB_OBJ) $(BUILD)/jobs/cli/main.o $(TEST_SUPPORT_OBJ): | $(GEN_HDR)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DPROFREG_VERSION='"$(VERSION)"' -c $< -o $@

$(BUILD)/common/lazy_%.o: common/lazy_%.c
	@mkdir -p $(dir $@)
	@case '$(LAZY_SONAMES)' in *'""'*) echo "a library profreg loads on first use" \
		"was not found (run 'make deps'): $(LAZY_SONAMES)" >&2; exit 1;; esac
	$(CC) $(ALL_CFLAGS) $(LAZY_SONAMES) -c $< -o $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(ALL_CFLAGS) -Wno-unused-parameter -Wno-missing-braces -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $^

$(BIN)/profreg: $(BUILD)/jobs/cli/main.o $(LIB)
	@mkdir -p $(BIN)
	$(CC) $(LDFLAGS) -Wl,-O1,--as-needed -o $@ $^ $(BIN_LIBS)

# The lazy loading test checks the libraries by the sonames profreg loads.
$(BUILD)/tests/test_lazylib.o: ALL_CFLAGS += $(LAZY_SONAMES)
$(BUILD)/tests/%.o: tests/unit/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) -c $< -o $@

$(BUILD)/tests/support/%.o: tests/support/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) -c $< -o $@

# --as-needed as the compiler's default has it, also under the sanitizers
# (whose link turns it off): a test binary loads what it calls, so that
# test_lazylib sees a library arrive at its first call in both builds.
# test_ingest counts the threads ingest starts and the hashes it computes:
# its pthread_create and EVP_Digest come first.
$(BUILD)/tests/test_ingest: LDFLAGS += -Wl,--wrap=pthread_create -Wl,--wrap=EVP_Digest
# test_blob counts the folders the local store makes: its mkdir comes first.
$(BUILD)/tests/test_blob: LDFLAGS += -Wl,--wrap=mkdir
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT_OBJ) $(LIB)
	$(CC) $(LDFLAGS) -Wl,--as-needed -o $@ $^ $(LIBS) $(TEST_LIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $(filter %.c %.a,$^) $(LIBS)

# The floor of a command that only connects: libpq alone.
$(BUILD)/bench/pqconnect: tests/bench/pqconnect.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror $(CFLAGS) $(shell pkg-config --cflags libpq) -o $@ $< \
		$(LDFLAGS) -Wl,-O1,--as-needed $(shell pkg-config --libs libpq)

$(BUILD)/servers/%: tests/servers/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror $(CFLAGS) $(shell pkg-config --cflags jansson) \
		-o $@ $< $(LDFLAGS) $(shell pkg-config --libs jansson)

# The Pyroscope and Parca stand-in: the wire format of the protocol's
# .proto files in pipeline/ (protobuf-c), libmicrohttpd and zlib.
PROTO_SERVER_PKGS := jansson libmicrohttpd libprotobuf-c zlib
$(BUILD)/servers/profiler_server: tests/servers/profiler_server.c \
		$(BUILD)/gen/pipeline/pyroscope.pb-c.c $(BUILD)/gen/pipeline/parca.pb-c.c \
		$(BUILD)/gen/pipeline/profile.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-braces $(CFLAGS) \
		-I$(BUILD)/gen $(shell pkg-config --cflags $(PROTO_SERVER_PKGS)) -o $@ \
		$(filter %.c,$^) $(LDFLAGS) $(shell pkg-config --libs $(PROTO_SERVER_PKGS))
# The signature-checking S3 proxy also takes the tests' own SigV4 code.
$(BUILD)/servers/s3_sigcheck: tests/servers/s3_sigcheck.c tests/support/sigv4.c tests/support/sigv4.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror $(CFLAGS) -I. \
		$(shell pkg-config --cflags jansson libcrypto) -o $@ tests/servers/s3_sigcheck.c \
		tests/support/sigv4.c $(LDFLAGS) $(shell pkg-config --libs jansson libcrypto)

# The Go demo service of the collection tests and the demo, built with
# golang-go; its build cache under $(BUILD)/go is the one every test's
# build then shares (tests/go/build.sh).
$(BUILD)/go/pprofdemo: $(wildcard tests/go/pprofdemo/*) tests/go/build.sh
	@mkdir -p $(dir $@)
	bash -c '. tests/go/build.sh && go_build "$$(go_cache $(BUILD))" pprofdemo "$(abspath $@)"'

# The fleet simulator: standalone, on GSL and libc only.
$(BUILD)/sim/fleetgen: tests/sim/fleetgen.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror $(CFLAGS) $(shell pkg-config --cflags gsl) \
		-o $@ $< $(LDFLAGS) $(shell pkg-config --libs gsl) -lm

# The scorer behind `make eval`: findings against the simulator's truth.
$(BUILD)/eval/eval: tests/eval/eval.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -Werror $(CFLAGS) $(PKG_CFLAGS) -o $@ $< $(LDFLAGS) $(PKG_LIBS) -lm

# `check` runs the suite on what is already installed; `test` installs first.
# `check-build` builds what the suite runs; `tests/run NAME...` runs a part of it.
check-build: $(BIN)/profreg $(TEST_BIN) $(BUILD)/sim/fleetgen $(BUILD)/eval/eval $(SERVER_BIN) \
	$(BUILD)/go/pprofdemo

check: check-build
	BUILD=$(BUILD) BIN=$(BIN) tests/run

test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) check

asan: deps
	@$(MAKE) --no-print-directory -j$(NPROC) SAN=1 BUILD=build/asan BIN=build/asan/bin check

demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all $(BUILD)/sim/fleetgen $(BUILD)/go/pprofdemo
	@scripts/demo

bench: deps
	@$(MAKE) --no-print-directory -j$(NPROC) OPT=-O2 all $(BENCH_BIN) $(BUILD)/sim/fleetgen
	@BUILD=$(BUILD) BIN=$(BIN) tests/bench/run

eval: deps
	@$(MAKE) --no-print-directory -j$(NPROC) all $(BUILD)/sim/fleetgen $(BUILD)/eval/eval
	@BUILD=$(BUILD) BIN=$(BIN) tests/eval/run

# Every C file through clang's warnings too, without building anything:
# make fuzz builds with clang and -Werror, and clang warns of what gcc lets
# pass (a variable only ever added to). The protobuf stand-in server has
# the warnings its generated code needs off, as its own rule does.
CLANG_SRC := $(LIB_SRC) jobs/cli/main.c $(TEST_SRC) $(TEST_SUPPORT) \
	$(filter-out tests/servers/profiler_server.c,$(SERVER_SRC)) $(BENCH_SRC) \
	$(wildcard tests/fuzz/*.c tests/sim/*.c tests/eval/*.c)
clang-check: | $(GEN_HDR)
	@printf '%s\n' $(CLANG_SRC) | xargs -P$(NPROC) -n 16 clang -fsyntax-only -std=c11 \
		-Wall -Wextra -Werror -I. -I$(BUILD)/gen $(PKG_CFLAGS) $(TEST_CFLAGS) -pthread \
		$(LAZY_SONAMES) -DPROFREG_VERSION='"$(VERSION)"'
	@clang -fsyntax-only -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter \
		-Wno-missing-braces -I$(BUILD)/gen $(PKG_CFLAGS) tests/servers/profiler_server.c

FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
fuzz:
	@scripts/install-deps clang libclang-rt-14-dev
	@$(MAKE) --no-print-directory CC=clang BUILD=build/fuzz \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined" \
		$(FUZZ_TARGETS:%=build/fuzz/fuzz/%)
	@tests/fuzz/run build/fuzz/fuzz

$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer,address,undefined -o $@ $(filter %.c %.a,$^) $(LIBS)

# The manual page: written by profreg from the commands' own option tables.
$(BUILD)/profreg.1: $(BIN)/profreg
	@mkdir -p $(dir $@)
	$(BIN)/profreg help --man >$@.tmp && mv $@.tmp $@

man: $(BUILD)/profreg.1

install: $(BIN)/profreg $(BUILD)/profreg.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(BIN)/profreg $(DESTDIR)$(PREFIX)/bin/profreg
	install -m 0644 $(BUILD)/profreg.1 $(DESTDIR)$(PREFIX)/share/man/man1/profreg.1

clean:
	rm -rf build bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
