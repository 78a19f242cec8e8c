"""Containment: the OS sandbox, the audit-hook guard, resource limits and the
processes and files a run of untrusted code needs."""
