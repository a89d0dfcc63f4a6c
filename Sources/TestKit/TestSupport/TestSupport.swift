// TestSupport: what the test targets share (docs/testing.md#what-the-test-targets-share-testsupport). Linked into the tests only,
// never into the shipped executables.
@_exported import CoreTestSupport
@_exported import Spawn
