pip3 install mxnet-cu90
