#!/usr/bin/env bash
# Helm 4 renders the chart as Helm 3 does: `helm4 template` and `helm
# template` give the same manifests (the test hook too) for the default
# values and for the fullest values (helm/ballast/ci/full-values.yaml) with
# prometheus-operator's API served. The unit tests (chart_unittest) render
# with the Helm 3 engine that helm-unittest is built with, whichever Helm runs
# them; this test is what carries their assertions over to Helm 4 (the
# NOTES, which template does not print, are read from helm4 install on the
# real nodes: realnodes_helm4). The
# helm4 binary is the version tests/testenv/helm4/go.mod requires.
source "$(dirname "$0")/lib.sh"

want=$(awk '$1 == "helm.sh/helm/v4" { print $2 }' "$source_dir/tests/testenv/helm4/go.mod")
got=$(helm4 version --template '{{.Version}}')
[[ $got == "$want" ]] || fail "helm4 version is $got, tests/testenv/helm4/go.mod requires $want"
[[ $(command helm version --template '{{.Version}}') == v3.* ]] || fail "helm is not Helm 3"
pass "helm4 is Helm $got, helm is Helm $(command helm version --template '{{.Version}}')"

# render WHICH NAME ARGS...: WHICH template with the control plane's version.
render() {
  local which=$1 name=$2
  shift 2
  command "$which" template ballast "$chart" -n ballast-system --kube-version "$kube_version" "$@" \
    >"$tmp/$name.$which.yaml" 2>"$tmp/$name.$which.err" || fail "$which template ($name): $(cat "$tmp/$name.$which.err")"
}
# same_objects A B: the two renderings hold the same objects, each from the
# same template (Helm 4 ends each document with a blank line, Helm 3 not);
# prints the differing ones' diff.
same_objects() {
  python3 - "$1" "$2" <<'PY'
import difflib, json, re, sys, yaml
def objects(path):
    text = open(path).read()
    # "---\n# Source: ballast/templates/x.yaml\n<object>" per document
    docs = re.split(r"^---\s*$", text, flags=re.M)
    out = []
    for doc in docs:
        source = re.search(r"^# Source: (.*)$", doc, flags=re.M)
        body = yaml.safe_load(doc)
        if body is not None:
            out.append(json.dumps([source.group(1) if source else None, body], sort_keys=True, indent=1))
    return out
a, b = objects(sys.argv[1]), objects(sys.argv[2])
if a == b:
    sys.exit(0)
sys.stdout.writelines(difflib.unified_diff([x + "\n" for x in a], [x + "\n" for x in b], "helm", "helm4", n=2))
sys.exit(1)
PY
}
monitoring=(--api-versions monitoring.coreos.com/v1 --api-versions monitoring.coreos.com/v1/PrometheusRule)
for values in defaults full; do
  args=()
  [[ $values == full ]] && args=("${monitoring[@]}" -f "$chart/ci/full-values.yaml")
  for which in helm helm4; do
    render "$which" "$values" "${args[@]}"
  done
  objects=$(grep -c '^kind:' "$tmp/$values.helm.yaml")
  ((objects > 20)) || fail "$values: Helm 3 rendered only $objects objects"
  same_objects "$tmp/$values.helm.yaml" "$tmp/$values.helm4.yaml" >"$tmp/$values.diff" ||
    fail "$values: Helm 4 renders other objects than Helm 3: $(head -c 3000 "$tmp/$values.diff")"
  pass "$values: Helm 4 renders the same $objects objects as Helm 3"
done

# Regression: the comparison sees a difference (it is not vacuous): a value
# given to Helm 4 alone changes its rendering.
render helm4 changed --set operator.replicas=3
! same_objects "$tmp/defaults.helm.yaml" "$tmp/changed.helm4.yaml" >/dev/null ||
  fail "a rendering with operator.replicas=3 compared equal to the defaults"
pass "a rendering that differs is caught"
