cat <<'EOF_REQ' > requirements.txt
requests==2.32.3
urllib3==2.2.3
EOF_REQ
python3 - <<PYEOF
import subprocess, sys
subprocess.check_call([sys.executable, "-m", "pip", "install", "rich"])
print("$HOME")
PYEOF
bash <<-SCRIPT
	pip install -r requirements.txt
	pytest
	SCRIPT
cat <<EOF | sh
pip install wheel
EOF
