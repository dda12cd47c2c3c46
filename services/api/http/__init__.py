"""The HTTP listener: the aiohttp application (``app``), the gates every request passes in
order (``gates``, ``host_header``, ``throttle``, ``connections``, ``protocol``), ``/ready``
(``readiness``), who is asking (``headers``) and ``POST /mcp`` (``mcp_transport``)."""
