# Run by layerlock under the interpreter it inspects (python -I: no user
# site, no PYTHONPATH). It imports nothing beyond what start-up already
# loaded (json, platform and sysconfig would triple its run time) and prints
# tab-separated `key value` lines.
import os
import site
import sys

out = [
    "executable\t" + sys.executable,
    "version\t%d.%d.%d" % sys.version_info[:3],
    "implementation\t" + sys.implementation.name,
    "sys_platform\t" + sys.platform,
    "prefix\t" + sys.prefix,
]
try:
    out.append("platform_machine\t" + os.uname().machine)
except AttributeError:
    import platform
    out.append("platform_machine\t" + platform.machine())
try:
    libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
except (AttributeError, ValueError, OSError):
    libc = ""
out.append("libc\t" + libc)

seen = set()
sites = []
try:
    sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
except AttributeError:
    pass
for entry in [p for p in sys.path if p and os.path.isdir(p)] + sites:
    real = os.path.realpath(entry)
    if real not in seen:
        seen.add(real)
        out.append("path\t" + real)
if sites:
    out.append("purelib\t" + os.path.realpath(sites[0]))
print("\n".join(out))
