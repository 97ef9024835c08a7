"""The sample bodies ``ummaya new adapter`` writes as an adapter's first fixtures.

The scaffold (ummaya/cli/scaffold.py) writes them; the placeholder gate (ci/placeholders.py)
refuses an adapter whose fixture is still the sample. Both read them here, in the gates' package
below the CLI, so the gate never imports the CLI.
"""

from __future__ import annotations

NORMAL_XML = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><response><header><resultCode>00</resultCode>'
    "<resultMsg>NORMAL SERVICE.</resultMsg></header><body><items>"
    "<item><name>예시 하나</name><addr>부산광역시 사하구 낙동대로550번길 37</addr></item>"
    "<item><name>예시 둘</name><addr>-</addr></item>"
    "</items><numOfRows>2</numOfRows><pageNo>1</pageNo><totalCount>2</totalCount></body></response>"
)
GATEWAY_ERROR_XML = (
    "<OpenAPI_ServiceResponse>\n\t<cmmMsgHeader>\n\t\t<errMsg>SERVICE ERROR</errMsg>\n"
    "\t\t<returnAuthMsg>SERVICE_KEY_IS_NOT_REGISTERED_ERROR</returnAuthMsg>\n"
    "\t\t<returnReasonCode>30</returnReasonCode>\n\t</cmmMsgHeader>\n</OpenAPI_ServiceResponse>"
)


__all__ = ["GATEWAY_ERROR_XML", "NORMAL_XML"]
