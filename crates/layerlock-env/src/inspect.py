# Run by layerlock under the interpreter it inspects (python -I: no user
# site, no PYTHONPATH). Prints one JSON object and imports nothing else.
import json
import os
import platform
import site
import sys
import sysconfig

paths = []
for entry in sys.path:
    if entry and os.path.isdir(entry):
        paths.append(os.path.realpath(entry))
try:
    for entry in site.getsitepackages():
        if os.path.isdir(entry):
            paths.append(os.path.realpath(entry))
except AttributeError:
    pass
for key in ("purelib", "platlib"):
    entry = sysconfig.get_paths().get(key)
    if entry and os.path.isdir(entry):
        paths.append(os.path.realpath(entry))

libc, libc_version = platform.libc_ver()
print(json.dumps({
    "executable": sys.executable,
    "version": list(sys.version_info[:3]),
    "implementation": sys.implementation.name,
    "sys_platform": sys.platform,
    "platform_machine": platform.machine(),
    "libc": libc,
    "libc_version": libc_version,
    "purelib": os.path.realpath(sysconfig.get_paths()["purelib"]),
    "prefix": sys.prefix,
    "paths": list(dict.fromkeys(paths)),
}))
