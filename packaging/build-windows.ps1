# Build the Windows installer: the PyInstaller one-folder bundle, wrapped by Inno Setup as
#   dist\arxiu-VERSION-windows-x64-setup.exe
# Parallel to build-linux.sh; NOT run by this project's CI (no Windows machine). See README.md.
#
# Needs: Python 3.11 x64 with the project installed for the CPU only:
#   $env:CMAKE_ARGS = "-DGGML_NATIVE=OFF"; pip install ".[packaging]"
#   (torch: the CPU wheel, pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu)
# and Inno Setup 6 (iscc.exe on PATH, or in its default folder).
$ErrorActionPreference = "Stop"
$Root = Resolve-Path (Join-Path $PSScriptRoot "..")
Set-Location $Root
$Version = (Select-String -Path app\__init__.py -Pattern '^__version__ = "(.+)"').Matches[0].Groups[1].Value
$Work = Join-Path $Root "build\pyinstaller"

Write-Host "==> check the build environment"
python -m PyInstaller --version
python packaging\check_llama_portable.py
if ($LASTEXITCODE -ne 0) { exit 1 }

Write-Host "==> freeze with PyInstaller (one folder)"
if (Test-Path "$Work\dist") { Remove-Item -Recurse -Force "$Work\dist" }
python -m PyInstaller --noconfirm --log-level WARN --distpath "$Work\dist" --workpath "$Work\work" packaging\arxiu.spec
if ($LASTEXITCODE -ne 0) { exit 1 }

Write-Host "==> Inno Setup"
$Iscc = (Get-Command iscc.exe -ErrorAction SilentlyContinue).Source
if (-not $Iscc) { $Iscc = "${env:ProgramFiles(x86)}\Inno Setup 6\ISCC.exe" }
New-Item -ItemType Directory -Force -Path (Join-Path $Root "dist") | Out-Null
& $Iscc "/DAppVersion=$Version" "/DBundleDir=$Work\dist\arxiu" "/DOutDir=$Root\dist" "/DRoot=$Root" packaging\windows\arxiu.iss
if ($LASTEXITCODE -ne 0) { exit 1 }

Write-Host "==> sizes"
python packaging\bundle_sizes.py "$Work\dist\arxiu" "$Root\dist\arxiu-$Version-windows-x64-setup.exe"
