// TestSupport: what the test targets share (STYLE.md "Tests"). Linked into the tests only,
// never into the shipped executables.
@_exported import Spawn
