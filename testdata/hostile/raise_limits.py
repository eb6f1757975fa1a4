# Raise the hard limits the jail set: refused.
import resource
for name in ("RLIMIT_NOFILE", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NPROC"):
    r = getattr(resource, name)
    soft, hard = resource.getrlimit(r)
    try:
        resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print(name, "raised")
    except (ValueError, OSError) as e:
        print(name, type(e).__name__)
