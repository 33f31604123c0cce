from alpine:3.20 as tiny
run apk add --no-cache py3-pip && pip install --break-system-packages \
  "httpx[http2]>=0.27"
onbuild RUN pip install -r requirements.txt
RUN ["unterminated", "exec"
RUN
RUN \
ENV A=1 B="two words" C
ARG WITH_EQUALS=a=b
USER 1000
HEALTHCHECK CMD curl -f http://localhost/ || exit 1
