"""Moving memories between stores: export to JSON Lines, import from it (also what migrate and
reembed do), with their replacement records, expiry and access counts."""

from shared.transfer.exporting import export_tenant, tenants
from shared.transfer.importing import Importer, ImportLineError, ImportReport, ImportTargetError
from shared.transfer.links import ImportLinkError
from shared.transfer.records import ExportedMemory, encode_line

__all__ = [
    "ExportedMemory",
    "ImportLineError",
    "ImportLinkError",
    "ImportReport",
    "ImportTargetError",
    "Importer",
    "encode_line",
    "export_tenant",
    "tenants",
]
