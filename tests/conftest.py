"""Settings shared by the whole suite."""

from hypothesis import HealthCheck, settings

# CI runs on a 2-core machine alongside real server processes: generation speed is not what the
# property tests check, so a slow moment must not fail them.
settings.register_profile("workrail", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("workrail")
