// Test helpers for code that uses Tether.
