# escape=`
FROM mcr.microsoft.com/windows/servercore:ltsc2022
SHELL ["powershell", "-Command"]
RUN pip install `
    requests==2.32.3 `
    urllib3
WORKDIR C:\\app
COPY requirements.txt C:\\app\\
RUN python -m pip install -r requirements.txt
