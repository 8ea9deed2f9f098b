# tarn — one build command: `make` builds build/tarn and build/libtarn.a.
# `make SAN=1` builds the same into build-san/ with ASan + UBSan.
# `make test` runs the whole suite (see tests/run.sh).

CC      ?= cc
SAN     ?= 0
ifeq ($(SAN),1)
BUILD   := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT     := -O1 -g
else
BUILD   := build
SANFLAGS :=
OPT     := -O2 -g
endif

DEPS    := deps
# libpq (Debian's libpq-dev): the PostgreSQL catalog backend (lake/catdb_pg.c, duck/pgscan.c)
PQ_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql))
PQ_LIBS   := $(shell pkg-config --libs libpq 2>/dev/null || echo -lpq)
CFLAGS  := -std=c17 -D_GNU_SOURCE $(OPT) -Wall -Wextra -Werror -Wno-unused-parameter \
           -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Iinclude -Isrc -isystem $(DEPS)/include $(PQ_CFLAGS) \
           $(SANFLAGS) -MMD -MP
LDFLAGS := $(SANFLAGS) -L$(DEPS)/lib -Wl,-rpath,'$$ORIGIN/../$(DEPS)/lib'
LIBS    := -lduckdb $(PQ_LIBS) -ljansson -ledit -lcrypto -lpthread -lm -ldl

LIB_SRC := $(sort $(wildcard src/util/*.c src/duck/*.c src/sql/*.c src/lake/*.c src/session/*.c src/project/*.c src/materialize/*.c src/sched/*.c src/web/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
# The web view's page, embedded in the binary (src/web/assets.h); the layout
# library comes from deps/ (scripts/deps.sh), never from a CDN.
WEB_ASSETS := src/web/page/index.html src/web/page/app.css src/web/page/app.js \
              $(DEPS)/web/dagre-3.1.3.min.js
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/web_assets.o
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

all: $(BUILD)/tarn $(BUILD)/libtarn.a $(UNIT_BIN)

$(DEPS)/lib/libduckdb.so:
	./scripts/deps.sh

$(DEPS)/web/dagre-3.1.3.min.js:
	./scripts/deps.sh

$(BUILD)/gen/web_assets.c: scripts/embed_assets.py $(WEB_ASSETS)
	python3 scripts/embed_assets.py $@ $(WEB_ASSETS)

$(BUILD)/obj/gen/web_assets.o: $(BUILD)/gen/web_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/%.o: %.c | $(DEPS)/lib/libduckdb.so
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(BUILD)/libtarn.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	ar rcs $@ $^

$(BUILD)/tarn: $(CLI_OBJ) $(BUILD)/libtarn.a
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libtarn.a $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libtarn.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wl,-rpath,'$$ORIGIN/../../$(DEPS)/lib' $(LDFLAGS) -o $@ $< $(BUILD)/libtarn.a $(LIBS) -lcmocka

test:
	./tests/run.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-san

.PHONY: all test format clean
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
