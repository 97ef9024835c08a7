"""Shared Korean domain vocabulary for the slot extractors: data, not per-adapter rules.

Regions are what citizens name; upstreams want different spellings of the same region (AirKorea
「서울」, NMC 「서울특별시」, TAGO a city code). The extractor finds the region once and each
adapter's own ``enum`` / ``x-enum-labels`` picks the spelling it wants.
"""

from __future__ import annotations

# (full name, short name, older full name or None, English name, WGS84 centroid of the city hall /
# provincial office, used only when a citizen names nothing more precise than the region)
SIDO: tuple[tuple[str, str, str | None, str, tuple[float, float]], ...] = (
    ("서울특별시", "서울", None, "Seoul", (37.5665, 126.9780)),
    ("부산광역시", "부산", None, "Busan", (35.1798, 129.0750)),
    ("대구광역시", "대구", None, "Daegu", (35.8714, 128.6014)),
    ("인천광역시", "인천", None, "Incheon", (37.4563, 126.7052)),
    ("광주광역시", "광주", None, "Gwangju", (35.1595, 126.8526)),
    ("대전광역시", "대전", None, "Daejeon", (36.3504, 127.3845)),
    ("울산광역시", "울산", None, "Ulsan", (35.5384, 129.3114)),
    ("세종특별자치시", "세종", None, "Sejong", (36.4800, 127.2890)),
    ("경기도", "경기", None, "Gyeonggi", (37.2752, 127.0095)),
    ("강원특별자치도", "강원", "강원도", "Gangwon", (37.8854, 127.7298)),
    ("충청북도", "충북", None, "Chungbuk", (36.6358, 127.4913)),
    ("충청남도", "충남", None, "Chungnam", (36.6588, 126.6728)),
    ("전북특별자치도", "전북", "전라북도", "Jeonbuk", (35.8202, 127.1088)),
    ("전라남도", "전남", None, "Jeonnam", (34.8161, 126.4629)),
    ("경상북도", "경북", None, "Gyeongbuk", (36.5760, 128.5056)),
    ("경상남도", "경남", None, "Gyeongnam", (35.2383, 128.6925)),
    ("제주특별자치도", "제주", "제주도", "Jeju", (33.4890, 126.4983)),
)

# Well-known districts and cities → (sido short name, sigungu official name or None).
DISTRICTS: dict[str, tuple[str, str | None]] = {
    "해운대": ("부산", "해운대구"),
    "사하": ("부산", "사하구"),
    "사하구": ("부산", "사하구"),
    "하단": ("부산", "사하구"),
    "서면": ("부산", "부산진구"),
    "부산진구": ("부산", "부산진구"),
    "동래": ("부산", "동래구"),
    "남포동": ("부산", "중구"),
    "광안리": ("부산", "수영구"),
    "강남": ("서울", "강남구"),
    "강남구": ("서울", "강남구"),
    "서초": ("서울", "서초구"),
    "종로": ("서울", "종로구"),
    "마포": ("서울", "마포구"),
    "홍대": ("서울", "마포구"),
    "여의도": ("서울", "영등포구"),
    "잠실": ("서울", "송파구"),
    "송파": ("서울", "송파구"),
    "신촌": ("서울", "서대문구"),
    "명동": ("서울", "중구"),
    "수원": ("경기", "수원시"),
    "성남": ("경기", "성남시"),
    "분당": ("경기", "성남시"),
    "판교": ("경기", "성남시"),
    "고양": ("경기", "고양시"),
    "일산": ("경기", "고양시"),
    "용인": ("경기", "용인시"),
    "창원": ("경남", "창원시"),
    "김해": ("경남", "김해시"),
    "포항": ("경북", "포항시"),
    "경주": ("경북", "경주시"),
    "전주": ("전북", "전주시"),
    "청주": ("충북", "청주시"),
    "천안": ("충남", "천안시"),
    "춘천": ("강원", "춘천시"),
    "강릉": ("강원", "강릉시"),
    "여수": ("전남", "여수시"),
    "목포": ("전남", "목포시"),
    "서귀포": ("제주", "서귀포시"),
    "제주시": ("제주", "제주시"),
    # Landmarks citizens name instead of a district (the place span carries them to a locate
    # upstream; the region says which city the request is about).
    "부산역": ("부산", "동구"),
    "부산시청": ("부산", "연제구"),
    "연산동": ("부산", "연제구"),
    "센텀": ("부산", "해운대구"),
    "남포": ("부산", "중구"),
    "동아대": ("부산", "사하구"),
    "승학": ("부산", "사하구"),
    "부산대": ("부산", "금정구"),
    "경성대": ("부산", "남구"),
    "부경대": ("부산", "남구"),
    "광화문": ("서울", "종로구"),
    "서울역": ("서울", "용산구"),
    "시청역": ("서울", "중구"),
    "서울시청": ("서울", "중구"),
    "을지로": ("서울", "중구"),
    "동대문": ("서울", "동대문구"),
    "이태원": ("서울", "용산구"),
    "용산": ("서울", "용산구"),
    "강남역": ("서울", "강남구"),
    "홍대입구": ("서울", "마포구"),
    "서울대": ("서울", "관악구"),
    "연세대": ("서울", "서대문구"),
    "고려대": ("서울", "성북구"),
}

# Citizens' words for 진료과목 → the official label an upstream's x-enum-labels uses.
SPECIALTY_SYNONYMS: dict[str, tuple[str, ...]] = {
    "내과": ("내과", "감기", "몸살", "배탈", "장염", "internal medicine", "cold", "flu"),
    "소아청소년과": ("소아청소년과", "소아과", "아이", "아기", "애기", "pediatric", "pediatrician", "child"),
    "정형외과": ("정형외과", "허리", "무릎", "관절", "뼈", "발목", "orthopedic", "back pain", "knee"),
    "안과": ("안과", "눈", "시력", "eye", "ophthalmolog"),
    "이비인후과": ("이비인후과", "코", "귀", "목감기", "비염", "ent", "ear", "nose", "throat"),
    "피부과": ("피부과", "피부", "두드러기", "여드름", "dermatolog", "skin", "rash"),
    "치과": ("치과", "이빨", "치아", "사랑니", "잇몸", "dentist", "dental", "tooth", "teeth"),
    "가정의학과": ("가정의학과", "family medicine"),
    "산부인과": ("산부인과", "임신", "gynecolog", "obstetric"),
    "신경과": ("신경과", "두통", "어지러", "neurolog", "headache"),
    "정신건강의학과": ("정신건강의학과", "정신과", "우울", "불면", "psychiatr"),
    "비뇨의학과": ("비뇨의학과", "비뇨기과", "urolog"),
    "외과": ("외과", "surgery", "surgeon"),
}

# Citizens' words for a life stage / target group → official labels (MOHW welfare codes).
LIFE_STAGE_SYNONYMS: dict[str, tuple[str, ...]] = {
    "영유아": ("영유아", "아기", "아이", "애기", "유아", "infant", "baby", "toddler"),
    "아동": ("아동", "초등", "어린이", "child", "children"),
    "청소년": ("청소년", "중학생", "고등학생", "teen", "youth"),
    "청년": ("청년", "대학생", "사회초년생", "young adult", "20대"),
    "중장년": ("중장년", "중년", "40대", "50대", "middle-aged"),
    "노년": ("노년", "노인", "어르신", "할머니", "할아버지", "부모님", "65세", "senior", "elderly"),
    "임신·출산": ("임신", "출산", "임산부", "산모", "pregnan", "childbirth"),
}
TARGET_GROUP_SYNONYMS: dict[str, tuple[str, ...]] = {
    "장애인": ("장애", "disab"),
    "저소득": ("저소득", "기초생활", "수급", "차상위", "형편이 어려", "low income", "low-income", "poor"),
    "한부모·조손": ("한부모", "조손", "싱글맘", "싱글대디", "single parent"),
    "다문화·탈북민": ("다문화", "탈북", "multicultural", "defector"),
    "보훈대상자": ("보훈", "국가유공자", "veteran"),
}

# Words that are about *when*, never a place or a keyword.
TEMPORAL_WORDS = (
    "오늘", "내일", "모레", "글피", "지금", "현재", "방금", "이번", "주말", "이번주", "다음주",
    "아침", "점심", "저녁", "밤", "새벽", "오전", "오후", "낮", "today", "tomorrow", "tonight",
    "now", "weekend", "morning", "afternoon", "evening", "currently", "right", "this",
    "어제", "그제", "그저께", "엊그제", "작년", "재작년", "올해", "내년", "지난주", "지난달", "이번달",
    "다음달", "요즘", "최근", "yesterday", "year",
)

# Korean particles stripped from the end of a word (longest first).
PARTICLES = (
    "에서는", "에서도", "으로는", "이랑", "에서", "까지", "부터", "한테", "에게", "으로", "하고",
    "께서", "은", "는", "이", "가", "을", "를", "에", "로", "의", "도", "만", "랑", "와", "과",
)

# Function words and verb endings that carry no slot content.
STOPWORDS = frozenset(
    """알려줘 알려줘요 알려주세요 알려 줘 주세요 좀 어디 어디야 어디에 어디있어 어딨어 있어 있어? 있나요 있니
    뭐야 뭐 어떻게 해 해줘 할까 하나요 되나 돼 돼? 돼요 되나요 가능해 찾아줘 찾아 보여줘 궁금해 싶어
    근처 주변 인근 부근 가까운 가까이 근방 쪽 앞 옆 제일 가장 지금 혹시 그 저 이 거기 여기 나 내 우리
    please show find me tell the a an is are of for in at near nearby around closest nearest what where
    how can i my to with on do does any there here which when""".split()
)
