#!/usr/bin/env bash

pushd statsmodels.github.io
echo "Pushing"
git push
popd

