#!/bin/sh
# Issue 29, section 2: compat's libgpib against linux-gpib's own libgpib over the
# virtual board. Runs the differential sequences (run.py) and the gpib.conf comparison
# (gpib_conf/compare.py), prints one summary line, and fails on a difference that
# compat/README.md ("Where compat and linux-gpib's library differ") and allow.txt do
# not explain.
#
#   REAL_LIBDIR      folder of linux-gpib's libgpib.so.0
#   COMPAT_LIBDIR    folder of compat's libgpib.so.0
#   VBOARD_SO        libgpib_vboard.so
#   GPIB_CONFIG_BIN  linux-gpib's gpib_config
#   FIDELITY_SEQUENCES (default 10000), FIDELITY_SEED (default: the date, printed)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
for v in REAL_LIBDIR COMPAT_LIBDIR VBOARD_SO GPIB_CONFIG_BIN; do
	eval "val=\${$v:-}"
	if [ -z "$val" ] || [ ! -e "$val" ]; then
		echo "ci.sh: $v must name an existing path (got '${val}')" >&2
		exit 2
	fi
done
export REAL_LIBDIR COMPAT_LIBDIR VBOARD_SO GPIB_CONFIG_BIN
FIDELITY_SEQUENCES=${FIDELITY_SEQUENCES:-10000}
FIDELITY_SEED=${FIDELITY_SEED:-$(date -u +%Y%m%d)}
export FIDELITY_SEQUENCES FIDELITY_SEED
ulimit -c 0 2>/dev/null || true

work=$(mktemp -d "${TMPDIR:-/tmp}/gpib-fidelity-ci.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
# Compiled once against compat's header (the same ABI as linux-gpib's); the library is
# chosen at run time by LD_LIBRARY_PATH.
for prog in fidelity gpib_conf/confdump; do
	gcc -std=c99 -Wall -Wextra -Werror -I"$root/compat/include" "$here/$prog.c" \
		-L"$COMPAT_LIBDIR" -l:libgpib.so.0 -o "$work/$(basename "$prog")"
done

status=0
start=$(date +%s)
python3 "$here/run.py" --bin "$work/fidelity" >"$work/seq.out" 2>&1 || status=1
cat "$work/seq.out"
python3 "$here/gpib_conf/compare.py" --bin "$work/confdump" >"$work/conf.out" 2>&1 || status=1
cat "$work/conf.out"
end=$(date +%s)
seq_line=$(grep '^fidelity:' "$work/seq.out" || echo "fidelity: did not finish")
conf_line=$(grep '^gpib.conf:' "$work/conf.out" || echo "gpib.conf: did not finish")
echo "SUMMARY ${seq_line}; ${conf_line}; $((end - start))s; $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
