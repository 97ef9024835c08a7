"""Synthetic registries for the retrieval and build benchmarks (nothing here is committed output).

``synthetic_manifests(real, n)`` returns ``n`` manifests: the real ones unchanged plus data.go.kr-
style services that differ by region, agency, dataset and edition — the near-duplicates a real
national catalog is full of ("부산광역시 사하구 공영주차장 현황", "부산광역시 서구 공영주차장
현황", "사하구 약국 현황 2024" …). Several datasets deliberately overlap the real adapters'
vocabulary (약국, 응급의료기관, 버스정류소, 대기오염, 교통사고, 복지시설 …) so the real 26 have
to stay findable among look-alikes. Deterministic for a given seed.

    python bench/synth.py 1000 /tmp/synth1k      # writes documents.json there
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from ummaya.model.manifest import Manifest

SIDO = [
    ("서울특별시", "Seoul", ["종로구", "중구", "용산구", "성동구", "광진구", "마포구", "서대문구", "강남구", "송파구", "관악구", "노원구", "은평구"]),
    ("부산광역시", "Busan", ["중구", "서구", "동구", "영도구", "부산진구", "동래구", "남구", "북구", "해운대구", "사하구", "금정구", "강서구", "연제구", "수영구", "사상구", "기장군"]),
    ("대구광역시", "Daegu", ["중구", "동구", "서구", "남구", "북구", "수성구", "달서구", "달성군"]),
    ("인천광역시", "Incheon", ["중구", "미추홀구", "연수구", "남동구", "부평구", "계양구", "서구", "강화군"]),
    ("광주광역시", "Gwangju", ["동구", "서구", "남구", "북구", "광산구"]),
    ("대전광역시", "Daejeon", ["동구", "중구", "서구", "유성구", "대덕구"]),
    ("울산광역시", "Ulsan", ["중구", "남구", "동구", "북구", "울주군"]),
    ("세종특별자치시", "Sejong", [""]),
    ("경기도", "Gyeonggi", ["수원시", "성남시", "고양시", "용인시", "부천시", "안산시", "안양시", "남양주시", "화성시", "평택시", "의정부시", "파주시", "김포시", "광명시"]),
    ("강원특별자치도", "Gangwon", ["춘천시", "원주시", "강릉시", "동해시", "속초시", "삼척시"]),
    ("충청북도", "Chungbuk", ["청주시", "충주시", "제천시", "음성군"]),
    ("충청남도", "Chungnam", ["천안시", "공주시", "보령시", "아산시", "서산시", "논산시"]),
    ("전북특별자치도", "Jeonbuk", ["전주시", "군산시", "익산시", "정읍시", "남원시"]),
    ("전라남도", "Jeonnam", ["목포시", "여수시", "순천시", "나주시", "광양시"]),
    ("경상북도", "Gyeongbuk", ["포항시", "경주시", "김천시", "안동시", "구미시", "영주시"]),
    ("경상남도", "Gyeongnam", ["창원시", "진주시", "통영시", "사천시", "김해시", "밀양시", "거제시", "양산시"]),
    ("제주특별자치도", "Jeju", ["제주시", "서귀포시"]),
]

# (ko name, en name, ko hints, en hints, primitive, domain) — many echo a real adapter's words.
DATASETS = [
    ("공영주차장", "public parking lots", ["주차장", "주차 요금", "무료 주차"], ["parking lot", "parking fee"], "find", "transport"),
    ("공중화장실", "public toilets", ["화장실", "개방 화장실"], ["public toilet", "restroom"], "find", "administration"),
    ("무더위쉼터", "heat shelters", ["무더위 쉼터", "폭염 쉼터"], ["cooling center", "heat shelter"], "find", "safety"),
    ("전기차 충전소", "EV charging stations", ["전기차 충전", "충전기"], ["EV charger", "charging station"], "find", "transport"),
    ("어린이집", "daycare centers", ["어린이집", "보육시설"], ["daycare", "childcare"], "find", "welfare"),
    ("공공도서관", "public libraries", ["도서관", "열람실"], ["library", "reading room"], "find", "culture"),
    ("관광지", "tourist attractions", ["관광지", "가볼만한 곳"], ["tourist spot", "attraction"], "find", "culture"),
    ("체육시설", "sports facilities", ["체육관", "운동장", "수영장"], ["gym", "sports center", "pool"], "find", "culture"),
    ("도시공원", "city parks", ["공원", "산책로"], ["park", "walking trail"], "find", "environment"),
    ("공공와이파이", "public Wi-Fi", ["와이파이", "무료 인터넷"], ["free wifi", "hotspot"], "find", "administration"),
    ("CCTV 설치 현황", "CCTV installations", ["CCTV", "방범 카메라"], ["CCTV", "security camera"], "find", "safety"),
    ("보안등", "security lights", ["가로등", "보안등"], ["street light"], "find", "safety"),
    ("음식점 위생등급", "restaurant hygiene grades", ["위생등급", "식당 위생"], ["hygiene rating", "restaurant"], "find", "health"),
    ("경로당", "senior centers", ["경로당", "노인정"], ["senior center"], "find", "welfare"),
    ("약국 현황", "pharmacies", ["약국", "약국 운영시간", "휴일 약국"], ["pharmacy", "drugstore"], "find", "health"),
    ("응급의료기관 현황", "emergency medical institutions", ["응급실", "응급의료기관"], ["emergency room", "ER"], "find", "health"),
    ("병의원 현황", "hospitals and clinics", ["병원", "의원", "진료과목"], ["hospital", "clinic"], "find", "health"),
    ("자동심장충격기 설치 현황", "AED installations", ["AED", "심장충격기"], ["AED", "defibrillator"], "find", "health"),
    ("버스정류소 현황", "bus stops", ["버스정류장", "정류소"], ["bus stop"], "find", "transport"),
    ("시내버스 노선", "city bus routes", ["버스 노선", "배차 간격"], ["bus route", "bus schedule"], "find", "transport"),
    ("대기오염 측정소", "air-pollution stations", ["대기오염", "미세먼지 측정소"], ["air pollution", "monitoring station"], "find", "environment"),
    ("교통사고 통계", "traffic accident statistics", ["교통사고", "사고 건수"], ["traffic accident", "crash statistics"], "find", "transport"),
    ("사회복지시설", "social welfare facilities", ["복지시설", "복지관"], ["welfare facility", "community center"], "find", "welfare"),
    ("기상관측 자료", "weather observations", ["기상 관측", "기온 관측"], ["weather observation", "temperature record"], "find", "weather"),
    ("의약품 판매업소", "drug retailers", ["의약품 판매", "안전상비의약품"], ["medicine retailer"], "find", "health"),
    ("도로명주소 건물", "road-name address buildings", ["도로명주소", "건물 주소"], ["road address", "building address"], "locate", "administration"),
    ("행정동 경계", "administrative dong boundaries", ["행정동", "법정동"], ["administrative district", "dong boundary"], "locate", "administration"),
    ("지정 대피소", "designated evacuation shelters", ["대피소", "민방위 대피소"], ["evacuation shelter"], "find", "safety"),
    ("쓰레기 배출 안내", "waste disposal guide", ["쓰레기 배출", "분리수거 요일"], ["garbage day", "recycling"], "find", "environment"),
    ("대형폐기물 배출 신고", "bulky waste disposal report", ["대형폐기물", "폐가전 수거"], ["bulky waste", "furniture disposal"], "send", "environment"),
    ("주정차 단속 현황", "parking enforcement", ["주정차 단속", "단속 카메라"], ["parking enforcement"], "find", "transport"),
    ("지방세 체납 조회", "local tax arrears", ["지방세", "체납"], ["local tax", "arrears"], "check", "administration"),
    ("수도요금 납부", "water bill payment", ["수도요금", "상수도 요금"], ["water bill"], "send", "administration"),
    ("민원 처리 현황", "civil petitions status", ["민원 처리", "민원 조회"], ["petition status"], "check", "administration"),
    ("전통시장", "traditional markets", ["전통시장", "재래시장"], ["traditional market"], "find", "culture"),
    ("착한가격업소", "fair-price shops", ["착한가격", "저렴한 식당"], ["fair price shop"], "find", "culture"),
    ("동물병원", "animal hospitals", ["동물병원", "반려동물 진료"], ["vet", "animal hospital"], "find", "health"),
    ("보건소 진료 안내", "public health center services", ["보건소", "예방접종"], ["public health center", "vaccination"], "find", "health"),
    ("노인일자리 모집", "senior job openings", ["노인일자리", "어르신 일자리"], ["senior jobs"], "find", "welfare"),
    ("청년 지원사업", "youth support programs", ["청년 지원", "청년 정책"], ["youth support"], "find", "welfare"),
]
EDITIONS = ["현황", "정보", "목록", "위치 정보", "조회 서비스", "표준데이터", "2023년 현황", "2024년 현황"]
EN_EDITIONS = ["status", "information", "list", "locations", "lookup service", "standard data", "2023", "2024"]


def _regions() -> list[tuple[str, str, str]]:
    out = []
    for sido, sido_en, sggs in SIDO:
        out.append((sido, "", sido_en))
        for sgg in sggs:
            if sgg:
                out.append((sido, sgg, sido_en))
    return out


# The datasets' older labels → model.manifest.Domain (a closed list since commit 90bc028).
_DOMAINS = {"address": "administration", "civil": "administration", "geo": "administration",
            "tax": "administration", "traffic": "transport"}


def synthetic_manifests(real: list[Manifest], n: int, seed: int = 7) -> list[Manifest]:
    """``real`` plus ``n - len(real)`` look-alike services (ids ``syn_<dataset>_<k>``)."""
    if n <= len(real):
        return list(real)
    template = next(m for m in real if m.tier == "live")
    rng = random.Random(seed)
    regions = _regions()
    combos = [(d, r, e) for d in range(len(DATASETS)) for r in range(len(regions)) for e in range(len(EDITIONS))]
    rng.shuffle(combos)
    out = list(real)
    for k, (di, ri, ei) in enumerate(combos[: n - len(real)]):
        name, name_en, hints_ko, hints_en, primitive, domain = DATASETS[di]
        sido, sgg, sido_en = regions[ri]
        place = f"{sido} {sgg}".strip()
        agency_ko = f"{place}청" if sgg else sido
        title_ko = f"{place} {name} {EDITIONS[ei]}"
        title_en = f"{sido_en} {sgg and sgg + ' '}{name_en} {EN_EDITIONS[ei]}".strip()
        extra = rng.sample(hints_ko, k=min(len(hints_ko), rng.randint(1, len(hints_ko))))
        data = template.model_dump()
        data.update(
            id=f"syn_{di:02d}_{k:05d}",
            title={"ko": title_ko, "en": title_en},
            summary={
                "ko": f"{place}의 {name} 데이터를 제공합니다. 공공데이터포털 {EDITIONS[ei]}.",
                "en": f"{name_en.capitalize()} in {sido_en} ({sgg or 'all'}), from the public data portal.",
            },
            agency={"code": f"LG{ri:03d}", "name_ko": agency_ko, "name_en": f"{sido_en} {sgg}".strip()},
            domain=_DOMAINS.get(domain, domain),
            primitive=primitive,
            tier="live",
            search_hints={"ko": extra + [f"{sgg or sido} {hints_ko[0]}"], "en": list(hints_en)},
            examples={
                "ko": [f"{sgg or sido} {hints_ko[0]} 어디 있어", f"{place} {name} 알려줘", f"{hints_ko[-1]} 정보"],
                "en": [f"{hints_en[0]} in {sido_en}", f"{name_en} list"],
            },
            negative_examples=[],
        )
        if primitive in ("check", "send"):
            data["citation"]["basis"] = data["citation"].get("basis") or "지방자치법"
        out.append(Manifest.model_validate(data))
    return out


def write_documents(real: list[Manifest], n: int, folder: Path, seed: int = 7) -> Path:
    """documents.json for ``n`` adapters (cached by n and seed inside ``folder``)."""
    from ummaya.codegen.emit_index import DOCUMENTS_PATH, emit_index, registry_domains

    folder.mkdir(parents=True, exist_ok=True)
    real_ids = ",".join(sorted(m.id for m in real))
    import hashlib

    emitter = Path(__file__).resolve().parents[1] / "codegen" / "emit_index.py"
    vocab = emitter.parents[1] / "registry" / "_vocab"
    glosses = b"".join((vocab / f"{v}.yaml").read_bytes() for v in ("domains", "primitives", "tiers"))
    sources = Path(__file__).read_bytes() + emitter.read_bytes() + glosses
    real_hash = hashlib.sha256("".join(m.model_dump_json() for m in real).encode()).hexdigest()
    tag = hashlib.sha256(f"{n}:{seed}:{real_ids}:{real_hash}:".encode() + sources).hexdigest()[:10]
    path = folder / f"documents-{n}-{tag}.json"
    if not path.exists():
        data = emit_index(synthetic_manifests(real, n, seed), registry_domains(Path(__file__).resolve().parents[1]))[DOCUMENTS_PATH]
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.rename(path)
    return path


def real_manifests(root: Path) -> list[Manifest]:
    from ummaya.codegen.loader import load_registry
    from ummaya.codegen.profile_merge import resolve_manifest

    reg, problems = load_registry(root)
    if problems:
        print("\n".join(map(str, problems)), file=sys.stderr)
    return [resolve_manifest(lm.manifest, reg.profiles) for lm in reg.manifests]


if __name__ == "__main__":
    root = Path(__file__).resolve().parents[1]
    n = int(sys.argv[1])
    print(write_documents(real_manifests(root), n, Path(sys.argv[2])))
