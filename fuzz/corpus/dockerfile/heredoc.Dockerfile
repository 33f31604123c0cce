FROM python:3.12-slim
RUN <<EOF
set -eux
pip install --upgrade pip
pip install -r /src/requirements.txt
EOF
RUN python3 - <<'PY'
import subprocess
subprocess.run(["pip", "install", "numpy"], check=True)
PY
RUN <<-SETUP bash
	cd /opt
	pip install uv
	SETUP
COPY <<EOF /etc/pip.conf
[global]
index-url = https://pypi.internal.example/simple
EOF
RUN cat <<A > /a.txt && cat <<B > /b.txt
first
A
second
B
