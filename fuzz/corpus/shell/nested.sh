VERSION=$(python -c 'import torch; print(torch.__version__)')
echo "torch $VERSION `uname -m`"
bash -c "pip install 'numpy<2' && python -c \"import numpy\""
sh -ec 'cd /tmp && pip install -e "$OLDPWD"'
( cd tests && pytest -x ) | tee log.txt
diff <(pip freeze | sort) <(sort constraints.txt) > /dev/null
sudo -E env PATH="$PATH" bash -lc "pip install ."
docker run --rm -v "$PWD:/w" python:3.12 bash -c 'pip install -r /w/req.txt'
args=(install --upgrade "pkg>=1")
pip "${args[@]}"
x=$'tab\there' y="${HOME:-/root}/bin" z=${#args[@]} w=$((1 + 2 * 3))
