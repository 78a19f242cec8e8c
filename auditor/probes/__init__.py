"""Property-based probes: edge cases the suite never tried, and witnesses for survivors."""
