$ErrorActionPreference = "Stop"
if ($IsWindows) {
  python -m pip install -r requirements.txt
}
<# block
#>
& ./ci/setup.ps1 $env:PY `
  --flag
