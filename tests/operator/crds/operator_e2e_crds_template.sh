#!/usr/bin/env bash
# spec.template carries the API server's own PodTemplateSpec schema
# (scripts/crd-schema): a job with a full template applies and keeps every
# field; a misspelt field (volumeMount for volumeMounts) is refused by the
# server, as kubectl apply sends it and as a raw request with
# fieldValidation=Strict; `kubectl explain wj.spec.template.spec.volumes` and
# the group's OpenAPI v3 document describe the field; a job in the short
# forms (spec.worker, spec.nodeSelector, spec.tolerations) applies beside it.
# The template is the preferred form (docs/crds.md): the examples and the
# every-key job use it, the short forms stay for the jobs written before it.
source "$(dirname "$0")/lib.sh"

install_ballast_crds

cat >"$tmp/full.yaml" <<'YAML'
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: thumbnails}
spec:
  workload:
    exec:
      command: [sh, -c, 'ls /data/in']
  items: 600
  template:
    metadata:
      labels: {team: imaging}
      annotations: {note: thumbnails}
    spec:
      serviceAccountName: thumbnailer
      securityContext: {fsGroup: 2000}
      imagePullSecrets: [{name: registry}]
      priorityClassName: batch-low
      initContainers:
        - name: fetch
          image: busybox:1.35
          command: [sh, -c, 'true']
      containers:
        - name: thumbnails
          image: registry.example/thumbnails:1
          env: [{name: OUT, value: /data/out}]
          envFrom: [{secretRef: {name: object-store}}]
          volumeMounts: [{name: data, mountPath: /data}, {name: settings, mountPath: /etc/settings}]
          resources: {requests: {cpu: 500m, memory: 256Mi}}
          ports: [{containerPort: 8000}]
      volumes:
        - {name: data, emptyDir: {}}
        - {name: settings, configMap: {name: settings}}
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]
YAML
kubectl apply -n "$ns" -f "$tmp/full.yaml" >"$tmp/out" 2>&1 || fail "a full template does not apply: $(cat "$tmp/out")"
kubectl get wj thumbnails -n "$ns" -o json >"$tmp/full.json"
python3 - "$tmp/full.yaml" "$tmp/full.json" <<'PY' || fail "the stored template differs from the applied one"
import json, sys, yaml
applied = yaml.safe_load(open(sys.argv[1]))["spec"]["template"]
stored = json.load(open(sys.argv[2]))["spec"]["template"]
# The one default of the schema's: a port's protocol, a key of its list map.
applied["spec"]["containers"][0]["ports"][0]["protocol"] = "TCP"
if applied != stored:
    print("applied:", json.dumps(applied, sort_keys=True), "\nstored: ", json.dumps(stored, sort_keys=True))
    sys.exit(1)
PY
pass "a full template applies and keeps every field (a port's protocol defaulted to TCP)"

# A misspelt field: kubectl apply (strict validation, kubectl's default)...
sed 's/volumeMounts:/volumeMount:/' "$tmp/full.yaml" | sed 's/name: thumbnails}/name: misspelt}/' >"$tmp/misspelt.yaml"
if kubectl apply -n "$ns" -f "$tmp/misspelt.yaml" >"$tmp/out" 2>&1; then
  fail "kubectl apply accepted volumeMount"
fi
grep -qF 'unknown field "spec.template.spec.containers[0].volumeMount"' "$tmp/out" ||
  fail "kubectl apply: unexpected refusal: $(cat "$tmp/out")"
pass "kubectl apply refuses volumeMount: $(grep -o 'unknown field "[^"]*"' "$tmp/out")"
# ... a request with fieldValidation=Strict, straight to the API server ...
python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' \
  "$tmp/misspelt.yaml" >"$tmp/misspelt.json"
if kubectl create --raw "/apis/ballast.io/v1alpha1/namespaces/$ns/weightedjobs?fieldValidation=Strict" \
  -f "$tmp/misspelt.json" >"$tmp/out" 2>&1; then
  fail "fieldValidation=Strict accepted volumeMount"
fi
grep -qF 'unknown field \"spec.template.spec.containers[0].volumeMount\"' "$tmp/out" ||
  grep -qF 'unknown field "spec.template.spec.containers[0].volumeMount"' "$tmp/out" ||
  fail "fieldValidation=Strict: unexpected refusal: $(cat "$tmp/out")"
pass "fieldValidation=Strict refuses volumeMount"
# ... and without validation the server prunes it (a structural schema keeps
# no unknown field): the job has no mounts at all, which is why strict is the
# default.
kubectl apply -n "$ns" --validate=false -f "$tmp/misspelt.yaml" >/dev/null ||
  fail "--validate=false did not apply"
expect_eq "--validate=false: volumeMount pruned" "" \
  "$(jp wj/misspelt '{.spec.template.spec.containers[0].volumeMount}{.spec.template.spec.containers[0].volumeMounts}')"

# explain, and the OpenAPI v3 document it reads. The API server republishes
# it a moment after a CRD changes, so both are retried for a while.
deadline=$((SECONDS + 30))
until kubectl explain wj.spec.template.spec.volumes >"$tmp/explain" 2>&1 &&
  grep -qF 'List of volumes that can be mounted by containers belonging to the pod' "$tmp/explain" &&
  grep -qF 'emptyDir	<Object>' "$tmp/explain"; do
  ((SECONDS < deadline)) || fail "kubectl explain wj.spec.template.spec.volumes: $(cat "$tmp/explain")"
  sleep 1
done
pass "kubectl explain wj.spec.template.spec.volumes describes the field and its members"
kubectl get --raw /openapi/v3/apis/ballast.io/v1alpha1 >"$tmp/openapi.json"
description=$(python3 - "$tmp/openapi.json" <<'PY'
import json, sys
schemas = json.load(open(sys.argv[1]))["components"]["schemas"]
job = next(s for name, s in schemas.items() if name.endswith(".WeightedJob"))
node = job["properties"]["spec"]
for key in ("template", "spec", "volumes"):
    node = node["properties"][key]
print(node.get("description", ""))
PY
)
[[ $description == *"List of volumes that can be mounted"* ]] ||
  fail "the OpenAPI v3 document's spec.template.spec.volumes says: '$description'"
pass "OpenAPI v3 of ballast.io/v1alpha1: spec.template.spec.volumes is described"

# The short forms apply beside the template (the operator writes them into it).
cat <<'YAML' | kubectl apply -n "$ns" -f - >"$tmp/out" 2>&1 || fail "short forms: $(cat "$tmp/out")"
apiVersion: ballast.io/v1alpha1
kind: WeightedJob
metadata: {name: short}
spec:
  workload: {primes: {limit: 1000}}
  worker: {image: ballast-worker:0.1.0, resources: {requests: {cpu: 100m}}}
  nodeSelector: {kubernetes.io/arch: arm64}
  tolerations: [{key: slow, operator: Exists}]
  template:
    metadata: {labels: {team: imaging}}
YAML
pass "the short forms apply beside a template"
