#!/usr/bin/env python3
"""The metadata Helm and Artifact Hub read from helm/ballast/Chart.yaml hold
to the chart and the repository.

  chart_metadata.py SOURCE_DIR

Checks that Chart.yaml names the project's home and sources and the license
of the LICENSE file (artifacthub.io/license); that every annotation is a
string, as Helm requires; that artifacthub.io/images lists exactly the
images the chart runs with its default values (imageRegistry composed with
image.repository and worker.image.repository as templates/_helpers.tpl
composes them, each listed by its last path component), each tagged with
the chart's appVersion; that
artifacthub.io/crds lists exactly the CRDs of helm/ballast/crds/ (kind,
storage version, name), each with a displayName and a description; and that
each of artifacthub.io/crdsExamples is of a listed CRD and equals the
example of the same kind and name under examples/. Then that the checks fail
on a Chart.yaml broken in each of those ways. Exits 1 naming what differs.
"""
import copy
import pathlib
import sys

import yaml

SPDX_OF_LICENSE = {"Apache License\nVersion 2.0": "Apache-2.0"}


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def license_of(root):
    """The SPDX identifier of the repository's LICENSE file, or None."""
    text = (root / "LICENSE").read_text(encoding="utf-8")
    words = " ".join(text.split()[:4])
    for opening, spdx in SPDX_OF_LICENSE.items():
        if words.startswith(" ".join(opening.split())):
            return spdx
    return None


def crds_of(chart_dir):
    """(kind, storage version, name) of each CRD in the chart's crds/."""
    found = set()
    for path in sorted((chart_dir / "crds").glob("*.yaml")):
        crd = yaml.safe_load(path.read_text(encoding="utf-8"))
        storage = [v["name"] for v in crd["spec"]["versions"] if v.get("storage")]
        found.add((crd["spec"]["names"]["kind"], storage[0], crd["metadata"]["name"]))
    return found


def examples_of(root):
    """Every document under examples/ with a kind and a name, by (kind, name)."""
    found = {}
    for path in sorted((root / "examples").rglob("*.yaml")):
        try:
            documents = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue
        for document in documents:
            if isinstance(document, dict) and "kind" in document:
                name = (document.get("metadata") or {}).get("name")
                found.setdefault((document["kind"], name), document)
    return found


def annotation(chart, key):
    """An annotation that holds YAML text, parsed."""
    text = chart.get("annotations", {}).get(key)
    if text is None:
        raise ValueError(f"no annotation {key}")
    return yaml.safe_load(text)


def check(chart, values, crds, examples, spdx):
    """What is wrong with `chart` (Chart.yaml as parsed): a list of messages,
    empty when nothing is."""
    errors = []
    if not str(chart.get("home", "")).startswith("https://"):
        errors.append(f"home is '{chart.get('home')}', not an https URL")
    sources = chart.get("sources") or []
    if not sources or not all(str(s).startswith("https://") for s in sources):
        errors.append(f"sources is {sources!r}, not a list of https URLs")
    if not all(m.get("name") for m in chart.get("maintainers") or [{}]):
        errors.append("a maintainer has no name (or there is none)")
    annotations = chart.get("annotations") or {}
    for key, value in annotations.items():
        if not isinstance(value, str):
            errors.append(f"annotation {key} is a {type(value).__name__}; Helm takes strings only (quote it)")
    if annotations.get("artifacthub.io/license") != spdx:
        errors.append(f"artifacthub.io/license is '{annotations.get('artifacthub.io/license')}', "
                      f"LICENSE is {spdx}")
    errors += check_images(chart, values)
    errors += check_crds(chart, crds)
    errors += check_examples(chart, crds, examples)
    return errors


def image_name(registry, name):
    """NAME under REGISTRY, as the chart's "ballast.imageName" composes it:
    as is when its first path component names a registry (a dot, a port,
    localhost) or REGISTRY is empty."""
    registry = registry or ""
    first, slash, _ = name.partition("/")
    if (slash and ("." in first or ":" in first or first == "localhost")) or not registry:
        return name
    return f"{registry}/{name}"


def check_images(chart, values):
    errors = []
    try:
        images = annotation(chart, "artifacthub.io/images") or []
    except ValueError as error:
        return [str(error)]
    app_version = str(chart.get("appVersion"))
    for entry in images:
        reference = entry.get("image", "")
        repository, _, tag = reference.rpartition(":")
        if tag != app_version:
            errors.append(f"artifacthub.io/images: {reference} is not tagged with appVersion {app_version}")
        if repository.rsplit("/", 1)[-1] != entry.get("name"):
            errors.append(f"artifacthub.io/images: {reference} is listed as '{entry.get('name')}'")
    listed = {entry.get("name"): entry.get("image") for entry in images}
    registry = values.get("imageRegistry", "")
    for key, repository in (("image.repository", values["image"]["repository"]),
                            ("worker.image.repository", values["worker"]["image"]["repository"])):
        runs = f"{image_name(registry, repository)}:{app_version}"
        name = repository.rsplit("/", 1)[-1]
        if name not in listed:
            errors.append(f"artifacthub.io/images lists no {name} ({key} in values.yaml)")
        elif listed[name] != runs:
            errors.append(f"artifacthub.io/images lists {listed[name]}, but the chart runs {runs} "
                          f"(imageRegistry '{registry}' and {key} '{repository}' in values.yaml)")
    return errors


def check_crds(chart, crds):
    try:
        listed = annotation(chart, "artifacthub.io/crds") or []
    except ValueError as error:
        return [str(error)]
    errors = []
    keys = {(entry.get("kind"), entry.get("version"), entry.get("name")) for entry in listed}
    for missing in sorted(crds - keys):
        errors.append(f"artifacthub.io/crds lacks {missing[0]} {missing[1]} ({missing[2]}) of crds/")
    for extra in sorted(keys - crds, key=str):
        errors.append(f"artifacthub.io/crds lists {extra}, which is not a CRD of crds/ (kind, version, name)")
    for entry in listed:
        if not entry.get("displayName") or not entry.get("description"):
            errors.append(f"artifacthub.io/crds: {entry.get('kind')} has no displayName or description")
    return errors


def check_examples(chart, crds, examples):
    try:
        listed = annotation(chart, "artifacthub.io/crdsExamples") or []
    except ValueError as error:
        return [str(error)]
    if not listed:
        return ["artifacthub.io/crdsExamples is empty"]
    errors = []
    kinds = {(kind, version) for kind, version, _ in crds}
    groups = {name.split(".", 1)[1] for _, _, name in crds}
    for example in listed:
        kind, name = example.get("kind"), (example.get("metadata") or {}).get("name")
        group, _, version = str(example.get("apiVersion")).partition("/")
        if (kind, version) not in kinds or group not in groups:
            errors.append(f"artifacthub.io/crdsExamples: {example.get('apiVersion')} {kind} is no CRD of crds/")
        elif examples.get((kind, name)) != example:
            errors.append(f"artifacthub.io/crdsExamples: {kind} {name} differs from the {kind} {name} "
                          "of examples/ (or there is none): copy it again, comments left out")
    return errors


def self_test(chart, values, crds, examples, spdx):
    """Each way of breaking Chart.yaml is caught: the checks are not vacuous."""
    def broken(change):
        bad = copy.deepcopy(chart)
        change(bad)
        return check(bad, values, crds, examples, spdx)

    def broken_values(change):
        def check_values(_):
            bad = copy.deepcopy(values)
            change(bad)
            return check(chart, bad, crds, examples, spdx)
        return check_values

    def set_annotation(key, parse_and_change):
        def change(bad):
            parsed = yaml.safe_load(bad["annotations"][key])
            parse_and_change(parsed)
            bad["annotations"][key] = yaml.safe_dump(parsed)
        return change

    def retag(images):
        images[0]["image"] = images[0]["image"].rsplit(":", 1)[0] + ":0.0.9"

    def move(images):
        images[0]["image"] = "docker.io/library/" + images[0]["image"].rsplit("/", 1)[-1]

    def drift_example(examples_listed):
        examples_listed[0]["spec"]["policy"] = "equal"

    cases = {
        "no home": lambda bad: bad.pop("home"),
        "no sources": lambda bad: bad.pop("sources"),
        "another license": lambda bad: bad["annotations"].update({"artifacthub.io/license": "MIT"}),
        "an unquoted boolean": lambda bad: bad["annotations"].update({"artifacthub.io/operator": True}),
        "an image of another tag": set_annotation("artifacthub.io/images", retag),
        "an image left out": set_annotation("artifacthub.io/images", lambda images: images.pop()),
        "an image of another registry": set_annotation("artifacthub.io/images", move),
        "a CRD left out": set_annotation("artifacthub.io/crds", lambda listed: listed.pop()),
        "a CRD of another version": set_annotation(
            "artifacthub.io/crds", lambda listed: listed[0].update({"version": "v1"})),
        "an example that drifted": set_annotation("artifacthub.io/crdsExamples", drift_example),
    }
    values_cases = {
        "bare image names (issue 58)": lambda bad: bad.update({"imageRegistry": ""}),
        "another registry": lambda bad: bad.update({"imageRegistry": "registry.lan:5000/ballast-io"}),
        "a worker repository with a registry": lambda bad: bad["worker"]["image"].update(
            {"repository": "quay.io/ballast-io/ballast-worker"}),
    }
    for what, change in cases.items():
        if not broken(change):
            fail(f"the check passes a Chart.yaml with {what}")
    for what, change in values_cases.items():
        if not broken_values(change)(None):
            fail(f"the check passes values.yaml with {what} against Chart.yaml's images")
    print(f"ok: the check fails a Chart.yaml broken in each of {len(cases)} ways, "
          f"and values.yaml changed in each of {len(values_cases)} ways")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: chart_metadata.py SOURCE_DIR")
    root = pathlib.Path(sys.argv[1])
    chart_dir = root / "helm" / "ballast"
    chart = yaml.safe_load((chart_dir / "Chart.yaml").read_text(encoding="utf-8"))
    values = yaml.safe_load((chart_dir / "values.yaml").read_text(encoding="utf-8"))
    crds, examples, spdx = crds_of(chart_dir), examples_of(root), license_of(root)
    if spdx is None:
        fail("LICENSE is of no license this check knows (SPDX_OF_LICENSE)")
    if not crds:
        fail("helm/ballast/crds/ holds no CRD")
    errors = check(chart, values, crds, examples, spdx)
    if errors:
        for error in errors:
            print(f"FAIL: helm/ballast/Chart.yaml: {error}", file=sys.stderr)
        sys.exit(1)
    print(f"ok: Chart.yaml names home {chart['home']}, license {spdx} (LICENSE), "
          f"{len(chart['sources'])} source(s)")
    print(f"ok: artifacthub.io/images are the images the chart runs ({values['imageRegistry']}, "
          f"tagged {chart['appVersion']}, appVersion), "
          f"artifacthub.io/crds = the {len(crds)} CRDs of crds/, crdsExamples from examples/")
    self_test(chart, values, crds, examples, spdx)


if __name__ == "__main__":
    main()
