"""The price sheet (sql/clickhouse/price-sheet.yaml): unit prices and named instance types."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from brokerstream.metrics.store import SQL_DIR

DEFAULT = SQL_DIR / "price-sheet.yaml"


@dataclass(frozen=True)
class InstanceType:
    name: str
    vcpus: float
    memory_gb: float
    usd_hour: float


@dataclass(frozen=True)
class UnitPrices:
    vcpu_hour: float
    gb_hour: float

    def hourly(self, vcpus: float, memory_gb: float) -> float:
        return vcpus * self.vcpu_hour + memory_gb * self.gb_hour


@dataclass(frozen=True)
class PriceSheet:
    vcpu_hour: float
    gb_hour: float
    instance_types: dict[str, InstanceType]
    fargate: UnitPrices | None = None
    projection_gb_per_vcpu: float = 4.0

    @property
    def on_demand(self) -> UnitPrices:
        return UnitPrices(self.vcpu_hour, self.gb_hour)

    def hourly(self, vcpus: float, memory_gb: float, instance_type: str = "") -> float:
        """What a run given these resources costs per hour."""
        if instance_type:
            if instance_type not in self.instance_types:
                raise ValueError(
                    f"unknown instance type {instance_type!r}; the price sheet has {sorted(self.instance_types)}"
                )
            return self.instance_types[instance_type].usd_hour
        return vcpus * self.vcpu_hour + memory_gb * self.gb_hour


def load(path: Path = DEFAULT) -> PriceSheet:
    doc = yaml.safe_load(path.read_text()) or {}
    try:
        units = doc["unit_prices"]
        sheet = PriceSheet(
            vcpu_hour=_positive(units["vcpu_hour"], "vcpu_hour"),
            gb_hour=_positive(units["gb_hour"], "gb_hour"),
            instance_types={
                name: InstanceType(
                    name,
                    _positive(t["vcpus"], f"{name}.vcpus"),
                    _positive(t["memory_gb"], f"{name}.memory_gb"),
                    _positive(t["usd_hour"], f"{name}.usd_hour"),
                )
                for name, t in (doc.get("instance_types") or {}).items()
            },
            fargate=UnitPrices(
                _positive(doc["fargate"]["vcpu_hour"], "fargate.vcpu_hour"),
                _positive(doc["fargate"]["gb_hour"], "fargate.gb_hour"),
            )
            if doc.get("fargate")
            else None,
            projection_gb_per_vcpu=_positive(doc.get("projection_gb_per_vcpu", 4), "projection_gb_per_vcpu"),
        )
    except KeyError as missing:
        raise ValueError(f"{path}: missing {missing}") from None
    return sheet


def _positive(value, what: str) -> float:
    number = float(value)
    if number <= 0:
        raise ValueError(f"price sheet: {what} must be positive, got {value}")
    return number


def store(client, sheet: PriceSheet) -> None:
    client.command("TRUNCATE TABLE unit_prices")
    client.command("TRUNCATE TABLE instance_types")
    client.insert(
        "unit_prices", [["vcpu_hour", sheet.vcpu_hour], ["gb_hour", sheet.gb_hour]], column_names=["resource", "usd"]
    )
    if sheet.instance_types:
        client.insert(
            "instance_types",
            [[t.name, t.vcpus, t.memory_gb, t.usd_hour] for t in sheet.instance_types.values()],
            column_names=["name", "vcpus", "memory_gb", "usd_hour"],
        )
