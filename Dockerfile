# The image of `nvcre controller` (`nvcre setup controller --image IMAGE` deploys it): this package on Python 3.11.
# Runs as a numeric non-root user (the kubelet's runAsNonRoot needs a number) in group 0, so a platform that assigns an
# arbitrary UID (OpenShift) runs it too: nvcre needs no HOME and no passwd entry, and writes nothing outside /tmp.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /src
# What a plain `pip install .` reads (LICENSE: pyproject's license-files): setup.py ships catalog/ and themes/ inside the package.
COPY pyproject.toml setup.py README.md LICENSE ./
COPY nvcre_tui ./nvcre_tui
COPY catalog ./catalog
COPY themes ./themes
RUN pip install . && rm -rf /src

WORKDIR /tmp
USER 65532:0
EXPOSE 9090
ENTRYPOINT ["nvcre"]
CMD ["controller"]
