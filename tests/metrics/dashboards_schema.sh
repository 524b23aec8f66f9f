#!/usr/bin/env bash
# The Grafana dashboards against Grafana's own schema library
# (scripts/dashboards-schema): first that the checker sees each kind of
# problem, at its path, in a broken copy of a dashboard (it is not vacuous),
# then every shipped dashboard, which must decode strictly and validate.
#   usage: dashboards_schema.sh SOURCE_DIR
set -euo pipefail
source_dir=${1:?usage: dashboards_schema.sh SOURCE_DIR}
check="$source_dir/scripts/dashboards-schema"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A copy with a field the schema does not know, one of the wrong type, a
# required one missing, a panel type and a query's data source it has no
# schema for, and a field of fieldConfig (which the dashboard's decoder reads
# leniently) it does not know.
python3 - "$source_dir/helm/ballast/files/dashboards/job.json" "$work/broken.json" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    board = json.load(handle)
board["panels"][0]["options"]["noSuchOption"] = True
board["panels"][0]["gridPos"]["w"] = "wide"
board["templating"]["list"][0]["current"].pop("value", None)
board["panels"][1]["type"] = "no-such-panel"
board["panels"][2]["targets"][0]["datasource"]["type"] = "mysql"
board["panels"][2]["fieldConfig"]["defaults"]["noSuchDefault"] = 1
with open(sys.argv[2], "w", encoding="utf-8") as handle:
    json.dump(board, handle)
PY
if "$check" "$work/broken.json" >"$work/broken.out"; then
  cat "$work/broken.out"
  echo "FAIL: a broken dashboard passed the schema check"
  exit 1
fi
for expected in '$.panels[0].options.noSuchOption: unexpected field' \
  '$.panels[0].gridPos.w: expected a value of type uint32, got a JSON string' \
  '$.templating.list[0].current.value: required field is missing' \
  '$.panels[1].type: panel type "no-such-panel" has no schema' \
  '$.panels[2].targets[0].datasource.type: expected "prometheus"' \
  '$.panels[2].fieldConfig.defaults.noSuchDefault: unexpected field'; do
  if ! grep -qF "$work/broken.json: $expected" "$work/broken.out"; then
    cat "$work/broken.out"
    echo "FAIL: the check did not report $expected"
    exit 1
  fi
done
echo "ok: a broken copy fails, each problem named with its path"

"$check" "$source_dir"/helm/ballast/files/dashboards/*.json
