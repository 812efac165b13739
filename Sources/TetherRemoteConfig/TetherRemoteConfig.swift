// The remote config module; see issue 6.
