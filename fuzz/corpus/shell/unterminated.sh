echo 'unterminated
pip install $(echo x
