#!/usr/bin/env bash
# A new user's path with their own images, on real kubelets (docs/getting-started.md,
# "Your own job"; examples/thumbnails, examples/file-digests, examples/secret-env):
# the examples' Containerfiles built with buildah (Debian's ImageMagick and
# python3, nothing of Ballast's), pushed to the bed's registry, which the
# boards pull them from as the job names them there, the chart installed
# from the registry, a share of 300 PNG images of skewed sizes as a
# PersistentVolume every node mounts, their paths and sizes in a ConfigMap;
# then, each applied from the examples as they are:
# - thumbnails: every thumbnail on the share, byte for byte the same as a
#   reference run of the same image outside Kubernetes (buildah run), and the
#   merged counts exact; each pod got the worker's bundle as its node allows
#   (an image volume on containerd 2, the init container's copy on 1.6);
# - file-digests, the operator told to mount the worker image on every node
#   (--worker-bundle=image-volume): a node that cannot (containerd 1.6) falls
#   back to the init container at once, one WorkerBundleFallback each; the
#   Python script's merged fields equal to what this test
#   computes itself from the files;
# - signed: a command reading a Secret through envFrom signs every item and
#   reports the key's id; the secret's value is in no object but the Secret.
# Needs Ballast's images in the bed's registry (scripts/images --arch amd64
# before scripts/testenv-up --real-nodes pushes them) and the Debian base image
# (scripts/debian-base-image, which the test runs; minutes the first time).
source "$(dirname "$0")/require_root.sh"
source "$(dirname "$0")/../smoke/lib.sh"
source "$(dirname "$0")/lib.sh"

examples=$source_dir/examples
release=user-jobs
read -ra boards <<<"$(kubectl get nodes -l ballast.io/pool=seed000 -o jsonpath='{.items[*].metadata.name}')"
((${#boards[@]} > 0)) || fail "no nodes in the pool seed000"
share=$tmp/share
pv=$ns-photos
uninstall_on_exit() {
  [[ -z ${install_pid:-} ]] || { kill "$install_pid" 2>/dev/null; wait "$install_pid" 2>/dev/null || true; }
  helm uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null 2>&1 || true
  kubectl delete pv "$pv" --wait=false >/dev/null 2>&1 || true
  cleanup
}
trap uninstall_on_exit EXIT

# --- the chart, installed beside the images' builds ---------------------------------
# (Its pods mostly wait, for their pulls and probes; the builds for apt.)
require_ballast_images
helm install "$release" "$chart" -n "$ns" "${helm_args[@]}" --wait --timeout 240s >"$tmp/install" 2>&1 &
install_pid=$!

# --- the user's images: Containerfile -> buildah -> the registry ---------------------
scripts_base=$("$source_dir/scripts/debian-base-image")
pass "base image $scripts_base"
# The machine's own network for the builds' RUN steps and none for the runs
# below: buildah's default, a CNI bridge (cni-podman0), would outlast the test
# and realnodes_down counts what the machine keeps after the real nodes.
for example in thumbnails file-digests; do
  buildah build --network host --layers --quiet -t "localhost/$example:1" "$examples/$example" >"$tmp/build-$example" 2>&1 ||
    fail "buildah build $example: $(tail -5 "$tmp/build-$example")"
  buildah push --quiet --tls-verify=false "localhost/$example:1" "docker://$registry/examples/$example:1" ||
    fail "buildah push $example to $registry"
  pass "image localhost/$example:1 built from its Containerfile, pushed as $registry/examples/$example:1"
done
# Nothing of Ballast's in them.
for example in thumbnails file-digests; do
  c=$(buildah from --pull=never "localhost/$example:1")
  found=$(buildah run --network none "$c" -- sh -c 'ls /usr/bin /usr/local/bin | grep -c ballast || true')
  buildah rm "$c" >/dev/null
  expect_eq "programs of Ballast's in localhost/$example:1" 0 "$found"
done

# --- the chart -----------------------------------------------------------------
wait "$install_pid" || fail "helm install: $(cat "$tmp/install")"
install_pid=
pass "helm install"

# --- the share: 300 images of skewed sizes, a PV every node mounts --------------------
mkdir -p "$share"
"$examples/thumbnails/make-photos" "$share/in" --count 300 --seed 7 >"$tmp/photos" ||
  fail "make-photos: $(cat "$tmp/photos")"
pass "share: $(cat "$tmp/photos")"
# Workers run as uid 65532 unless the template says otherwise (docs/crds.md):
# the output directory is theirs, as an NFS export's would be.
mkdir -p "$share/out"
chown 65532:65532 "$share/out"
# The example's PV and claim, with this test's host directory and PV name
# (a PV is cluster-wide).
python3 - "$examples/thumbnails/storage.yaml" "$share" "$pv" >"$tmp/storage.yaml" <<'PY'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
for doc in docs:
    if doc["kind"] == "PersistentVolume":
        doc["metadata"]["name"] = sys.argv[3]
        doc["spec"]["hostPath"]["path"] = sys.argv[2]
    else:
        doc["spec"]["volumeName"] = sys.argv[3]
yaml.safe_dump_all(docs, sys.stdout)
PY
kubectl apply -n "$ns" -f "$tmp/storage.yaml" >/dev/null
bound() { [[ $(jp pvc/photos '{.status.phase}') == Bound ]]; }
wait_until "claim photos Bound to $pv" 60 bound
# The items: paths with their sizes, as the example's comment makes them.
find "$share/in" -type f -printf '%s\t%P\n' | sort -k2 >"$tmp/list.txt"
kubectl create configmap photos-list -n "$ns" --from-file=list.txt="$tmp/list.txt" >/dev/null
expect_eq "items listed" 300 "$(wc -l <"$tmp/list.txt")"

# --- the reference run: the same image, outside Kubernetes --------------------------
cut -f2 "$tmp/list.txt" >"$share/reference-items"
c=$(buildah from --pull=never localhost/thumbnails:1)
buildah run --network none -v "$share:/data" "$c" -- sh -c \
  'BALLAST_ITEMS_FILE=/data/reference-items BALLAST_RESULT_FILE=/data/reference.json OUT=/data/reference thumbnail' ||
  fail "the reference run"
buildah rm "$c" >/dev/null
pass "reference run: $(cat "$share/reference.json")"
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

phase() { jp "weightedjob/$1" '{.status.phase}'; }
succeeded() {
  local p
  p=$(phase "$1")
  [[ $p == Failed ]] && fail "job $1 failed: $(jp "weightedjob/$1" '{.status.conditions}')"
  [[ $p == Succeeded ]] || return 1
  # (A job whose items failed all their attempts is Succeeded too: the
  # result says so.)
  [[ $(jp "weightedjob/$1" '{.status.result.exec.failures}') == "[]" ]] ||
    fail "job $1 has failed items: $(jp "weightedjob/$1" '{.status.result.exec}')"
}
# fields JOB: the job's merged result fields, one "name rule value" a line.
fields() {
  jp "weightedjob/$1" '{.status.result}' | python3 -c '
import json, sys
text = sys.stdin.read()
try:
    fields = json.loads(text)["exec"]["fields"]
except (ValueError, KeyError) as error:
    sys.exit(f"no status.result.exec.fields ({error!r}) in status.result: {text}")
for name, merged in sorted(fields.items()):
    for rule in ("sum", "min", "max"):
        if rule in merged:
            print(name, rule, merged[rule])
    if "list" in merged:
        print(name, "list", json.dumps([entry[2] for entry in merged["list"]]), merged["count"])'
}
# Only the boards run the examples' jobs (server-0 holds the operator), and
# their image is the registry's, as a user's cluster names it there.
pin() {
  sed -e 's/^  profile: raspberry-pi$/  profile: raspberry-pi\n  nodeSelector: {ballast.io\/pool: seed000}/' \
    -e "s|image: localhost/\([a-z-]*\):1$|image: $registry/examples/\1:1|" "$1"
}

# --- thumbnails --------------------------------------------------------------------
pin "$examples/thumbnails/job.yaml" | kubectl apply -n "$ns" -f - >/dev/null
wait_until "job thumbnails Succeeded" 300 succeeded thumbnails
fields thumbnails >"$tmp/thumbnails.fields" || fail "thumbnails: no fields"
cat >"$tmp/thumbnails.expected" <<EOF
bytesIn sum $(field "$share/reference.json" bytesIn)
bytesOut sum $(field "$share/reference.json" bytesOut)
thumbnails sum 300
EOF
diff "$tmp/thumbnails.expected" "$tmp/thumbnails.fields" >&2 || fail "thumbnails: merged fields differ from the reference run's"
pass "thumbnails: status.result.exec $(jp weightedjob/thumbnails '{.status.result.exec}')"
diff -r "$share/reference" "$share/out" >"$tmp/diff" 2>&1 ||
  fail "thumbnails differ from the reference run's: $(head -5 "$tmp/diff")"
expect_eq "thumbnails on the share, each the same as the reference's" 300 "$(find "$share/out" -type f -name '*.jpg' | wc -l)"
expect_eq "partial files left" 0 "$(find "$share/out" -name '*.part' | wc -l)"
pass "thumbnails: efficiency $(jp weightedjob/thumbnails '{.status.efficiency}'), split over $(jp weightedjob/thumbnails '{.status.nodes[*].name}')"
expect_worker_bundle thumbnails
# The boards ran the user's image as the registry serves it.
refs=$(pulled_images | grep "/thumbnails:" || true)
expect_eq "thumbnails' image in the Pulled Events" "$registry/examples/thumbnails:1" "$(cut -d' ' -f2 <<<"$refs" | sort -u)"
pass "thumbnails' image from the registry: $(paste -sd';' <<<"$refs")"

# --- file-digests (python3) ------------------------------------------------------------
# With the image volume forced on every node (--worker-bundle=image-volume): a
# node whose runtime cannot mount one (containerd 1.6: CreateContainerError,
# `failed to mkdir ""`) gets its pod deleted at once and its next pod copies
# the bundle (WorkerBundleFallback); the job is exact either way.
helm upgrade "$release" "$chart" -n "$ns" "${chart_args[@]}" --reuse-values --set operator.workerBundle=image-volume \
  --wait --timeout 240s >"$tmp/upgrade" || fail "helm upgrade (workerBundle=image-volume): $(cat "$tmp/upgrade")"
pin "$examples/file-digests/job.yaml" | kubectl apply -n "$ns" -f - >/dev/null
wait_until "job file-digests Succeeded" 300 succeeded file-digests
fields file-digests >"$tmp/digests.fields" || fail "file-digests: no fields"
# What the script must have found, computed here from the same files.
python3 - "$share/in" "$tmp/list.txt" >"$tmp/digests.expected" <<'PY'
import hashlib, json, os, sys
files = size = largest = checksum = 0
first = []
for line in open(sys.argv[2]):
    path = line.rstrip("\n").split("\t", 1)[1]
    data = open(os.path.join(sys.argv[1], path), "rb").read()
    digest = hashlib.sha256(data).digest()
    files += 1
    size += len(data)
    largest = max(largest, len(data))
    checksum += int.from_bytes(digest[:4], "big")
print("bytes sum", size)
print("checksum sum", checksum)
print("empty list [] 0")
print("files sum", files)
print("largest max", largest)
PY
diff "$tmp/digests.expected" "$tmp/digests.fields" >&2 || fail "file-digests: merged fields differ from this test's"
pass "file-digests: fields $(paste -sd, "$tmp/digests.fields")"
expect_worker_bundle file-digests
unable=0
for node in $(kubectl get pods -n "$ns" -l ballast.io/job=file-digests -o jsonpath='{.items[*].spec.nodeName}'); do
  node_mounts_image_volumes "$node" || unable=$((unable + 1))
done
expect_eq "file-digests: WorkerBundleFallback events (one per pod on a node without image volumes)" "$unable" \
  "$(kubectl get events -n "$ns" --field-selector reason=WorkerBundleFallback,involvedObject.name=file-digests \
    -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -c '^node ' || true)"
helm upgrade "$release" "$chart" -n "$ns" "${chart_args[@]}" --reuse-values --set operator.workerBundle=auto \
  --wait --timeout 240s >"$tmp/upgrade" || fail "helm upgrade (workerBundle=auto): $(cat "$tmp/upgrade")"

# --- a Secret through envFrom --------------------------------------------------------
pin "$examples/secret-env/job.yaml" | kubectl apply -n "$ns" -f - >/dev/null
wait_until "job signed Succeeded" 300 succeeded signed
fields signed >"$tmp/signed.fields" || fail "signed: no fields"
printf '%s\n' 'keyId list ["AKIA-EXAMPLE"]' 'signed sum 40' >"$tmp/signed.expected"
# keyId's count is the number of runs, which depends on the split: not compared.
sed -i 's/^\(keyId list .*\) [0-9]*$/\1/' "$tmp/signed.fields"
diff "$tmp/signed.expected" "$tmp/signed.fields" >&2 || fail "signed: merged fields differ"
pass "signed: every item signed with the Secret's key"
secret=not-a-real-secret
for object in weightedjob/signed $(kubectl get pods -n "$ns" -l ballast.io/job=signed -o name); do
  kubectl get -n "$ns" "$object" -o json | grep -q "$secret" && fail "the secret's value is in $object"
done
pass "the secret's value is in no job or pod object"
