pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124 && python -m pytest -q || exit 1; echo done &
[ -d venv ] || python -m venv venv; . venv/bin/activate
if ! command -v uv >/dev/null 2>&1; then curl -LsSf https://astral.sh/uv/install.sh | sh; fi
until pip install -r requirements.txt; do sleep 5; done
{ echo a; echo b; } > out.txt 2>&1
FOO=1 BAR="two words" make -C build test
