// CatchStopSignals: SIGTERM and SIGINT to a handler, as ballast-worker's
// loop and its probe both stop (SA_RESTART, nothing else blocked while it
// runs). The handler must be async-signal-safe: it flags the stop and wakes a
// thread of the program's own that does the rest.
#pragma once

namespace ballast::worker {

void CatchStopSignals(void (*handler)(int));

}  // namespace ballast::worker
