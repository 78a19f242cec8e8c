"""Discovery: the project, its code under test, and what its tests import."""
