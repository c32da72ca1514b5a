#!/bin/bash
# Every C file also passes clang's warnings (make clang-check): make fuzz
# builds with clang and -Werror, and clang warns of things gcc lets pass,
# so a tree green under gcc alone could no longer build its fuzzers.
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
T=$PROFREG_TEST_TMP/cli_clang
rm -rf "$T" && mkdir -p "$T"
BUILD_DIR=${PROFREG_BUILD:?run through tests/run}

if out=$(make -s -C "$ROOT" --no-print-directory BUILD="$BUILD_DIR" clang-check 2>&1); then
	ok "every C file compiles under clang with -Wall -Wextra -Werror"
else
	not_ok "every C file compiles under clang with -Wall -Wextra -Werror" \
		"$(printf '%s\n' "$out" | grep -m 5 'error:')"
fi

# The check fails on what only clang sees: a sum that is never read.
cat >"$T/sum.c" <<'C'
int f(void);
int f(void)
{
	int s = 0;
	for (int i = 0; i < 3; i++)
		s += i;
	return 0;
}
C
if make -s -C "$ROOT" --no-print-directory BUILD="$BUILD_DIR" CLANG_SRC="$T/sum.c" \
	clang-check >"$T/sum.out" 2>&1; then
	not_ok "a variable only added to fails the check" "$(cat "$T/sum.out")"
else
	grep -q "unused-but-set-variable" "$T/sum.out" &&
		ok "a variable only added to fails the check" ||
		not_ok "a variable only added to fails the check" "$(head -5 "$T/sum.out")"
fi
finish
