# Our Python tooling (launcher provisioning, generators, load drivers, analytics) for compose's
# one-shot jobs. Same pinned requirements as the native venv.
FROM python:3.11-slim
WORKDIR /app
COPY requirements.lock /app/
RUN pip install --no-cache-dir --no-deps -r requirements.lock
COPY python /app/python
COPY platform /app/platform
COPY schemas /app/schemas
COPY connectors /app/connectors
COPY sql /app/sql
ENV PYTHONPATH=/app/python
ENTRYPOINT []
