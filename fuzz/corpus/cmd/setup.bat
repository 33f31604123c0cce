@echo off
rem it's setup
set PKG=foo
if exist req.txt (
  call ci\install.bat %PKG% ^
    --x & pip install %PKG%
)
for %%i in (a b) do pip install %%i
