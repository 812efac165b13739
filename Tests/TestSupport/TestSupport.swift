// Test infrastructure shared by the test targets.
