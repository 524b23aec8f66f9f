// The compensating factor k of Mirtaheri (seed 004, §3.6.3, eq. 3-45): how much
// of a planned transfer to send when moving work takes time, so that the
// receiver is not left idle waiting for data and the sender is not left with
// work it could have kept.
//
// Thread-safety: pure functions.
#pragma once

namespace ballast::balance {

// Returns k in [0, 1] for one transfer (the first, so t(r'-1) = 0):
//   k = (2 λrl² + λrl λl) / D + (2 λl² + λrl λl) / D · (T / Δt),
//   D = 2 λl² + 2 λrl λl + 2 λrl²,
// where compute_rate = λl (receiver's execution rate), transfer_rate = λrl
// (rate at which the load reaches it), idle_in = T (time until the receiver
// runs out of its own work) and transfer_time = Δt (time the whole planned
// amount takes to arrive). Returns 1 when the data arrives before the receiver
// would be idle (T >= Δt) or when transfers are free (transfer_rate = inf).
double CompensatingFactor(double compute_rate, double transfer_rate, double idle_in,
                          double transfer_time);

}  // namespace ballast::balance
