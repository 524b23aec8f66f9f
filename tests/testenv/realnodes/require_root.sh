# Sourced first by every real-node test: real nodes need root (containerd,
# cgroups, the bridge, iptables), so without it the test is skipped (exit 77,
# CTest's SKIP_RETURN_CODE for the label) rather than failed.
if [[ $(id -u) != 0 ]]; then
  echo "SKIP: the real nodes need root"
  exit 77
fi
