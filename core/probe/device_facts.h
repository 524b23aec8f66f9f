// The facts of a node's devices, derived from a probe's snapshot
// (docs/probe.md): the boot disk and, when it is an SD card, its maker and
// date; the power supply's current limit, the under-voltage alarm and the
// firmware's throttling flags; the SoC's temperature. DeriveFacts (facts.h)
// derives them after the machine's own facts, whose raspberry_pi they read;
// each adds its warnings to `reader`'s.
//
// Thread-safety: pure functions of the snapshot, writing `facts` only.
#pragma once

#include "core/probe/facts.h"
#include "core/probe/snapshot_reader.h"

namespace ballast::probe {

// boot_disk, boot_disk_bytes and, for an SD card, boot_disk_is_sd,
// sd_manfid, sd_maker and sd_date.
void DeriveBootDisk(SnapshotReader& reader, Facts& facts);
// supply_max_current_ma, the under-voltage alarm and the throttled flags
// (warning of a missing firmware node on a Raspberry Pi only).
void DerivePower(SnapshotReader& reader, Facts& facts);
// soc_temp_c and the file it was read from.
void DeriveTemperature(SnapshotReader& reader, Facts& facts);
// memory_cgroup, the file it was read from and, when it is missing, the
// kernel command line's word that switched it off. Silent where neither
// cgroup file exists (a captured tree without them); a garbled one warns.
void DeriveMemoryCgroup(SnapshotReader& reader, Facts& facts);

}  // namespace ballast::probe
