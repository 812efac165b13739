// Where Musl's C headers import into Swift differently from Glibc's, Scripts/check-platforms
// gives each module the Musl shape of the declaration when it type-checks the Musl branches
// on Linux. None is ever run.

import Glibc

/// Musl defines the socket type as an `Int32` macro (Glibc: an enum case).
let SOCK_STREAM: Int32 = 1
