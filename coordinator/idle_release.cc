#include "coordinator/idle_release.h"

namespace ballast::coordinator {

bool ReleaseIdle(const IdleFacts& facts) {
  return facts.enabled && !facts.verifying && facts.idle && facts.told_wait &&
         facts.unassigned == 0 && facts.other_live >= kReleaseKeepsLive;
}

}  // namespace ballast::coordinator
