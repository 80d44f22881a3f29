#!/usr/bin/env bash
# Side-by-side speed of hyperflat's graph/ benchmarks against the PyTorch reference (bench/torch_ref.py).
#
# Usage: bench/compare.sh [options] [-- extra go test args]
#   --quick             fewer Go iterations and a short torch run
#   --tags TAGS         go build tags, e.g. --tags openblas (GOFLAGS from the environment is honoured too)
#   --benchtime N       Go iterations per benchmark (-benchtime=Nx; default 20, 5 with --quick)
#   --count K           go test -count=K; the median of the K ns/op values is used (default 1)
#   --only LIST         comma-separated workloads, e.g. mlp_grad_f32,cnn_hvp_f64 (default: all 8)
#   --go-output FILE    parse this saved `go test -bench` output instead of running go test
#   --torch-default F   parse this saved torch_ref.py output instead of running it (default malloc)
#   --torch-tuned F     same, for the GLIBC_TUNABLES run
# Environment: TORCH_PYTHON (default /usr/bin/python3, the Debian python with python3-torch), GOFLAGS.
#
# Prints a table (ms per step) and one machine-parseable line per workload:
#   RATIO <workload> <hyperflat ms / torch tuned ms>
# Workload names: {mlp,cnn}_{grad,hvp}_{f32,f64}  <->  Benchmark{MLP,CNN}{Grad,HVP}/{f32,f64}.
# Installs nothing. Exits 1 if torch is missing or a benchmark result is missing.
set -euo pipefail

TUNABLES='glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1073741824'
PY=${TORCH_PYTHON:-/usr/bin/python3}
ALL="mlp_grad_f32,mlp_grad_f64,mlp_hvp_f32,mlp_hvp_f64,cnn_grad_f32,cnn_grad_f64,cnn_hvp_f32,cnn_hvp_f64"

quick=0 tags="" benchtime="" count=1 only="$ALL" go_file="" td_file="" tt_file=""
extra=()
die() { echo "compare.sh: $*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --tags) tags=${2:?--tags needs a value}; shift ;;
    --tags=*) tags=${1#*=} ;;
    --benchtime) benchtime=${2:?}; shift ;;
    --count) count=${2:?}; shift ;;
    --only) only=${2:?}; shift ;;
    --go-output) go_file=${2:?}; shift ;;
    --torch-default) td_file=${2:?}; shift ;;
    --torch-tuned) tt_file=${2:?}; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
  shift
done
[[ -z $benchtime ]] && { [[ $quick == 1 ]] && benchtime=5 || benchtime=20; }
[[ $benchtime =~ ^[0-9]+$ && $count =~ ^[0-9]+$ ]] || die "--benchtime and --count take integers"

cd "$(dirname "$0")/.."
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# --- preflight: torch must be importable by the system python (only needed if we run it) ---
if [[ -z $td_file || -z $tt_file ]]; then
  if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
    echo "compare.sh: $PY cannot import torch. Install the reference with:" >&2
    echo "    apt-get install python3-torch" >&2
    echo "(Debian's PyTorch 1.13; this script installs nothing itself)" >&2
    exit 1
  fi
  blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
  case "$blas" in
    *openblas*|*blis*|*mkl*) ;;
    *) echo "WARNING: libblas.so.3 -> ${blas:-?}: torch will use the reference BLAS and be ~10x slow on" \
            "MLP steps; GORGONIA.md's numbers were taken with OpenBLAS (apt-get install libopenblas0)." >&2 ;;
  esac
fi
if [[ -z $go_file || -z $td_file || -z $tt_file ]]; then
  read -r load1 _ < /proc/loadavg
  if awk -v l="$load1" 'BEGIN{exit !(l > 0.7)}'; then
    echo "WARNING: 1-min load average is $load1 on $(nproc) CPUs; timings will be inflated by other work." >&2
  fi
fi

# --- hyperflat: go test -bench ---
if [[ -z $go_file ]]; then
  go_file=$tmp/go.txt
  targs=(); [[ -n $tags ]] && targs=(-tags "$tags")
  cmd=(go test "${targs[@]}" -run '^$' -bench 'Benchmark(MLP|CNN)(Grad|HVP)' -benchtime="${benchtime}x"
       -count="$count" "${extra[@]}" ./graph/)
  echo "# ${GOFLAGS:+GOFLAGS=$GOFLAGS }${cmd[*]}" >&2
  if ! "${cmd[@]}" > "$go_file" 2>&1; then
    cat "$go_file" >&2; die "go test failed"
  fi
fi

# Benchmark lines: "BenchmarkMLPGrad/f32-2   20   4800000 ns/op [...]" -> "mlp_grad_f32 <ms>"
# (median over repeated -count lines).
parse_go() {
  awk '
    $1 ~ /^Benchmark(MLP|CNN)(Grad|HVP)\/f(32|64)(-[0-9]+)?$/ {
      for (i = 2; i < NF; i++) if ($(i+1) == "ns/op") {
        n = $1; sub(/^Benchmark/, "", n); sub(/-[0-9]+$/, "", n)
        m = tolower(substr(n, 1, 3)); k = (substr(n, 4, 4) == "Grad") ? "grad" : "hvp"
        dt = n; sub(/.*\//, "", dt)
        print m "_" k "_" dt, $i / 1e6
      }
    }' "$1" | sort -k1,1 -k2,2g | awk '
      { v[$1] = v[$1] " " $2; c[$1]++ }
      END { for (w in v) { split(substr(v[w], 2), a, " "); n = c[w]
              print w, (n % 2) ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 } }'
}
# torch_ref.py lines: "TORCH <name> <ms>"
parse_torch() { awk '$1 == "TORCH" && NF == 3 { print $2, $3 }' "$1"; }

parse_go "$go_file" > "$tmp/go.ms"
[[ -s $tmp/go.ms ]] || { cat "$go_file" >&2; die "no Benchmark{MLP,CNN}{Grad,HVP}/f{32,64} results in go output"; }

# --- torch: default malloc, then the malloc-tuned run ---
qflag=(); [[ $quick == 1 ]] && qflag=(--quick)
if [[ -z $td_file ]]; then
  td_file=$tmp/td.txt
  echo "# torch default malloc" >&2
  env -u GLIBC_TUNABLES "$PY" bench/torch_ref.py "${qflag[@]}" --only "$only" > "$td_file" || die "torch_ref.py failed"
fi
if [[ -z $tt_file ]]; then
  tt_file=$tmp/tt.txt
  echo "# torch GLIBC_TUNABLES=$TUNABLES" >&2
  GLIBC_TUNABLES=$TUNABLES "$PY" bench/torch_ref.py "${qflag[@]}" --only "$only" > "$tt_file" || die "torch_ref.py (tuned) failed"
fi
parse_torch "$td_file" > "$tmp/td.ms"
parse_torch "$tt_file" > "$tmp/tt.ms"

# --- table ---
awk -v only="$only" -v gof="$tmp/go.ms" -v tdf="$tmp/td.ms" -v ttf="$tmp/tt.ms" '
  BEGIN {
    while ((getline l < gof) > 0) { split(l, a, " "); g[a[1]] = a[2] }
    while ((getline l < tdf) > 0) { split(l, a, " "); d[a[1]] = a[2] }
    while ((getline l < ttf) > 0) { split(l, a, " "); t[a[1]] = a[2] }
    n = split(only, w, ",")
    fmt = "%-14s %12s %12s %12s %10s %10s\n"
    printf fmt, "workload", "hyperflat_ms", "torch_def_ms", "torch_tun_ms", "hf/t_def", "hf/t_tun"
    missing = 0
    for (i = 1; i <= n; i++) {
      k = w[i]
      if (!(k in g) || !(k in d) || !(k in t)) missing++
      gs = (k in g) ? sprintf("%.3f", g[k]) : "-"
      ds = (k in d) ? sprintf("%.3f", d[k]) : "-"
      ts = (k in t) ? sprintf("%.3f", t[k]) : "-"
      rd = (k in g && d[k] > 0) ? sprintf("%.2f", g[k] / d[k]) : "-"
      rt = (k in g && t[k] > 0) ? sprintf("%.2f", g[k] / t[k]) : "-"
      printf fmt, k, gs, ds, ts, rd, rt
      if (rt != "-") ratio[i] = "RATIO " k " " sprintf("%.4f", g[k] / t[k])
    }
    print ""
    for (i = 1; i <= n; i++) if (i in ratio) print ratio[i]
    if (missing) { printf "compare.sh: %d workload(s) without a result (-)\n", missing > "/dev/stderr"; exit 1 }
  }'
