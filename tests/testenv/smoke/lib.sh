# Helpers for the smoke tests (sourced). Each test gets the control plane that
# the CTest fixture started (BALLAST_TESTENV_DIR), kubectl and helm on PATH,
# and a namespace of its own that is deleted when it exits.
set -Eeuo pipefail
# A command that stops the test through set -e is named when the test exits
# (cleanup, below): without it, a test that fails that way says nothing.
trap 'last_error="line $LINENO: $BASH_COMMAND (status $?)"' ERR

: "${BALLAST_TESTENV_DIR:?run through ctest, or set BALLAST_TESTENV_DIR to a running control plane}"
[[ -f $BALLAST_TESTENV_DIR/env ]] || {
  echo "FAIL: no control plane in $BALLAST_TESTENV_DIR (start it with scripts/testenv-up)" >&2
  exit 1
}
# shellcheck source=/dev/null
source "$BALLAST_TESTENV_DIR/env"
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
test_name=$(basename "$0" .sh)
tmp=$(mktemp -d)
# kubectl's discovery cache, the test's own: tests run in parallel, and one
# that wrote the cache just before another's CRD appeared left the other's
# kubectl reading a list without it, fresh by its TTL, after a reset too
# ("no matches for kind Widget" right after discovery listed it).
export KUBECACHEDIR=$tmp/kube-cache

# Each line a test prints through fail or pass starts with the seconds since
# it sourced this file, to a tenth ("ok: [ 12.3 s] helm install"), so a
# test's log shows what each step cost.
started_us=${EPOCHREALTIME//[!0-9]/}
elapsed() {
  local us=$((${EPOCHREALTIME//[!0-9]/} - started_us))
  printf '[%5d.%d s]' $((us / 1000000)) $((us / 100000 % 10))
}
fail() {
  echo "FAIL: $(elapsed) $*" >&2
  failed=1
  exit 1
}
pass() { echo "ok: $(elapsed) $*"; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
  [[ $2 == "$3" ]] || fail "$1: expected '$2', got '$3'"
  pass "$1 = $3"
}

# wait_until WHAT SECONDS COMMAND...: retries COMMAND until it succeeds.
wait_until() {
  local what=$1 timeout=$2 deadline=$((SECONDS + $2))
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out after $timeout s waiting for $what"
    sleep 0.2
  done
  pass "$what"
}

# retry WHAT COMMAND...: runs COMMAND up to five times, a second apart (a
# create lost to another test that installs the same object, a new kind
# refused for a moment after it is served); its output passes through, and
# its errors are shown when the last try fails too.
retry() {
  local what=$1 attempt
  shift
  for attempt in 1 2 3 4 5; do
    "$@" 2>"$tmp/retry.err" && return 0
    ((attempt < 5)) && sleep 1
  done
  fail "$what: $(cat "$tmp/retry.err")"
}

# wait_established SECONDS CRD...: kubectl wait --for condition=Established on
# each CRD (crd/NAME), asked again while a new CRD has no status yet: kubectl
# wait then fails at once with ".status.conditions accessor error: <nil>"
# instead of waiting (kubernetes/kubernetes#66439), and the WeightedJob CRD,
# whose pod template makes it large, gets its status a few hundred
# milliseconds after its creation.
wait_established() {
  local deadline=$((SECONDS + $1))
  shift
  until kubectl wait --for condition=Established --timeout="$((deadline - SECONDS + 1))s" "$@" \
    >"$tmp/wait-established.out" 2>&1; do
    grep -q 'status.conditions accessor error' "$tmp/wait-established.out" && ((SECONDS < deadline)) ||
      { cat "$tmp/wait-established.out" >&2; return 1; }
    sleep 0.2
  done
}

# jp OBJECT JSONPATH: one field of an object in the test's namespace.
jp() { kubectl get -n "$ns" "$1" -o "jsonpath=$2"; }

# A namespace per test, with its default service account (pods need it).
ns=${test_name//_/-}-$(date +%s%N | tail -c 6)
kubectl create namespace "$ns" >/dev/null
cleanup() {
  local status=$?
  if ((status != 0)) && [[ -z ${failed:-} ]]; then
    echo "FAIL: $(elapsed) stopped by a failing command: ${last_error:-not recorded} (exit $status)" >&2
  fi
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
wait_until "service account default in $ns" 30 kubectl get serviceaccount default -n "$ns"
