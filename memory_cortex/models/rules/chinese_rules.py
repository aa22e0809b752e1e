"""The Chinese statements that state an attribute of their subject ("我上个月搬到杭州了" → home = 杭州),
each a pattern and the handler that writes its fact."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .chinese_facts import (
    END,
    REL,
    T,
    V,
    liked_value,
    origin_clean,
    origin_place,
)
from .chinese_handlers import (
    Handler,
    age_fact,
    attr_fact,
    call_me_fact,
    each_fact,
    fan_fact,
    favourite_fact,
    home_fact,
    language_fact,
    likes_fact,
    name_fact,
    org_job_fact,
    partner_by_fact,
    pet_fact,
    plan_date_fact,
    relation_fact,
    study_fact,
    work_fact,
)
from .cjk_values import (
    DATE,
    DIET_ZH,
    NUMBER,
    is_allergen,
    is_birth_date,
    is_condition,
    is_drink,
    is_language,
    is_place,
)

# --- the statements


@dataclass(frozen=True)
class FactRule:
    """A statement's shape; ``final``: once its shape matches, nothing else reads the part (a joke
    like "我住在被窝里" is a home statement whose value is no place, not something else)."""

    pattern: re.Pattern[str]
    handler: Handler
    final: bool = True


PARTICLE = r"(?:就好了?|就行了?|就可以了?|吧|啊|呀|哦|喔|哈|啦|嘛|～|~)*"
NAME_V = r"(?P<v>[^，,。！？!?；;\s]{1,20}?)"


def _rules(*rows: tuple[str, Handler] | tuple[str, Handler, bool]) -> tuple[FactRule, ...]:
    return tuple(FactRule(re.compile(row[0]), row[1], *row[2:]) for row in rows)


ZH_FACT_RULES: tuple[FactRule, ...] = _rules(
    # name
    (rf"^我(?:的)?(?:名字|全名|真名)(?:是|叫){NAME_V}{PARTICLE}$", name_fact),
    (rf"^我{T}(?:改名)?叫{NAME_V}{PARTICLE}$", name_fact),
    (
        rf"^我(?:的)?(?P<kind>英文名字?|中文名字?|小名|昵称|暱稱|外号|外號|网名|網名)(?:是|叫){NAME_V}{PARTICLE}$",
        name_fact,
    ),
    (
        rf"^(?:你|您)?(?P<soft>(?:以后|以後)?(?:都)?(?:可以|就|请|請)*)(?:叫|称呼|稱呼)我(?:做)?{NAME_V}(?P<end>{PARTICLE})$",
        call_me_fact,
    ),
    # age, birthday
    (rf"^我{T}(?:满|滿)?(?P<v>{NUMBER})(?P<unit>周岁|週歲|岁|歲)?(?:半)?{END}$", age_fact),
    (rf"^我(?:的)?生日(?:是|在)?{V}{END}$", attr_fact("birthday", "identity", 8, "生日", is_birth_date)),
    (
        rf"^我{T}(?:是)?{V}(?:出生|生)的?{END}$",
        attr_fact("birthday", "identity", 8, "生日", is_birth_date),
        False,
    ),
    (rf"^我{T}出生(?:于|於|在){V}{END}$", attr_fact("birthday", "identity", 8, "生日", is_birth_date), False),
    # home, origin
    (
        rf"^我{T}(?:一直)?(?:住在|住|生活在|居住在|定居在|定居于|定居於|常住|base在?|坐标|坐標){V}{END}$",
        home_fact,
    ),
    (
        rf"^我{T}(?:(?:从|從)[^，,搬]{{1,10}})?{T}搬(?:到|去|回|来|來)了?{V}(?:(?:已经|已經)?(?:{NUMBER}|几|幾|好几|好幾|半)(?:个|個)?(?:多)?(?:年|月)(?:多)?了?)?{END}$",
        home_fact,
    ),
    (
        rf"^我{T}在{V}(?:住|生活|定居)了?(?:(?:已经|已經)?(?:{NUMBER}|几|幾|好几|好幾|半)(?:个|個)?(?:多)?(?:年|月)(?:多)?了?)?{END}$",
        home_fact,
    ),
    (rf"^我{T}在{V}(?:定居|安家|落户|落戶|买房|買房|生活|居住)(?:了)?{END}$", home_fact),
    (rf"^我{T}(?:和|跟|与|與)[^，,]{{1,6}}?(?:一起)?(?:住在|住|生活在){V}{END}$", home_fact),
    (rf"^(?:我的?)?(?:新家|现居地|現居地)(?:在|是){V}{END}$", home_fact),
    (rf"^我{T}家{T}(?:住在|在){V}{END}$", home_fact),
    (
        rf"^我{T}是{V}(?:人)(?:啦|哦|喔|呢|呀|啊)?{END}$",
        attr_fact("origin", "identity", 8, "出身", origin_place, origin_clean),
        False,
    ),
    (rf"^我{T}是{V}的{END}$", attr_fact("origin", "identity", 8, "出身", origin_place, origin_clean), False),
    (rf"^我{T}(?:来自|來自){V}{END}$", attr_fact("origin", "identity", 8, "出身", is_place)),
    (
        rf"^我{T}(?:是)?在{V}(?:出生|出世|长大|長大|出生长大|出生長大|土生土长|土生土長)的?{END}$",
        attr_fact("origin", "identity", 8, "出身", is_place),
    ),
    (rf"^我{T}(?:出生|生)(?:在|于|於){V}{END}$", attr_fact("origin", "identity", 8, "出身", is_place), False),
    (
        rf"^我(?:的)?(?:老家|家乡|家鄉|故乡|故鄉|籍贯|籍貫)(?:在|是){V}{END}$",
        attr_fact("origin", "identity", 8, "出身", is_place),
    ),
    # work and study
    (
        rf"^我{T}(?:是)?在(?P<org>[^，,]+?)(?:做|当|當|担任|擔任|干|幹)(?P<job>[^，,]+?){END}$",
        work_fact,
        False,
    ),
    (
        rf"^我{T}(?:是)?在(?P<org>[^，,]+?)(?:上班|工作|任职|任職|打工|实习|實習|就职|就職|供职|供職){END}$",
        work_fact,
    ),
    # "下周一开始我去字节跳动上班": a new employer, from a day on
    (
        rf"^(?:[^，,我]{{0,8}}?(?:开始|開始|起))?我{T}(?:就|要|会|會)?去(?P<org>[^，,]+?)(?:上班|工作|任职|任職|报到|報到|入职|入職){END}$",
        work_fact,
    ),
    (
        rf"^我{T}(?:是)?在(?P<school>[^，,]*?)(?:读|讀|念|学|學|攻读|攻讀|主修|辅修|輔修|进修|進修){V}{END}$",
        study_fact,
        False,
    ),
    (rf"^我{T}(?:开始|開始)(?:学|學|学习|學習|自学|自學)了?{V}{END}$", study_fact),
    (rf"^我{T}是(?:学|學)(?P<v>医|醫|[^，,]{{2,8}}?)(?:的|出身){END}$", study_fact),
    (rf"^我{T}(?:的)?(?:专业|專業|研究方向|方向|学的|學的|主修|辅修|輔修)(?:是){V}{END}$", study_fact),
    (rf"^我{T}(?:在)?(?:研究|主攻|专攻|專攻|主修|辅修|輔修)(?!过|過|一下){V}{END}$", study_fact),
    (
        rf"^我{T}(?:(?:从|從)[^，,]{{1,12}}?)?(?:跳槽|跳|换|換|转|轉)到了?(?P<org>[^，,]+?){END}$",
        work_fact,
    ),
    (
        rf"^我{T}(?:入职|入職|加入|加盟)了?(?P<org>[^，,]+?)(?:(?:{NUMBER}|半|几|幾)(?:个|個)?(?:月|年|周|週|天)(?:了)?)?{END}$",
        work_fact,
    ),
    (rf"^我{T}是(?P<org>[^，,的]{{2,10}})的(?P<job>[^，,]{{2,10}}?){END}$", org_job_fact, False),
    (
        rf"^我{T}(?:是|转行|轉行|改行|当|當)(?:当|當|做)?了?(?:一名|一个|一個|一位|个|個|名)?(?P<job>[^，,]+?){END}$",
        work_fact,
        False,
    ),
    (
        rf"^我{T}(?:做|当|當|干|幹)了?(?:{NUMBER}|几|幾|好几|好幾)(?:多)?年(?:的)?(?P<job>[^，,]+?){END}$",
        work_fact,
    ),
    (rf"^我{T}(?:是)?(?:做|搞)(?P<any_job>(?P<job>[^，,]{{1,8}}?))的{END}$", work_fact),
    (rf"^我{T}做(?P<job>[^，,]{{2,8}}?){END}$", work_fact, False),
    (
        rf"^我{T}(?P<any_job>(?P<job>开(?:出租车|出租車|滴滴|网约车|網約車|货车|貨車|卡车|卡車|公交车|公交車)))(?:的)?{END}$",
        work_fact,
    ),
    # partner, relations, pets
    (
        rf"^我{T}(?:下个月|下個月|下周|下週|明年|年底|月底)?(?:要|将|將|准备|準備|就要|快要)?(?:和|跟|与|與)(?:我的?)?(?:男朋友|女朋友|男友|女友|未婚夫|未婚妻|对象|對象)?"
        rf"{NAME_V}(?:结婚|結婚|订婚|訂婚|领证|領證|在一起)(?:了)?(?:(?:{NUMBER}|半|几|幾)(?:个|個)?(?:月|年)了?)?{END}$",
        partner_by_fact,
    ),
    (
        rf"^我(?:的|家的?)?(?P<rel>{REL})(?:的)?(?:名字|英文名|中文名)?(?:叫|(?P<is>是|就是)){NAME_V}{PARTICLE}$",
        relation_fact,
    ),
    (
        rf"^(?:我的?|我们的?|我們的?)?(?:新(?:来的|來的)?)?(?P<rel>领导|領導|老板|老闆|经理|經理|主管|上司)"
        rf"(?:换成了?|換成了?|变成了?|變成了?|成了|叫|(?P<is>是)){NAME_V}{PARTICLE}$",
        relation_fact,
    ),
    (rf"^{NAME_V}(?P<is>是)我(?:的)?(?P<rel>{REL}){END}$", relation_fact),
    (
        rf"^我{T}(?:家)?(?:养了|養了|养着|養著|有|养|養|领养了|領養了|收养了|收養了|捡了|撿了|买了|買了|新养了|新養了)"
        rf"(?:一|两|兩|三|几|幾|\d+)?(?:只|隻|条|條|头|頭|匹|个|個)?{V}(?:叫(?P<name>[^，,]{{1,10}}))?{END}$",
        pet_fact,
        False,
    ),
    # food and drink
    (
        rf"^我{T}(?:是)?(?:一个|一個|个|個)?(?:吃|只吃|在搞|在吃|搞|坚持|堅持|开始|開始)?(?P<v>{DIET_ZH})"
        rf"(?:食者|者|主义者|主義者|的人|饮食|飲食)?(?:的)?(?:(?:{NUMBER}|好几|好幾|几|幾)年了?|很久了?)?{END}$",
        attr_fact("diet", "identity", 8, "饮食"),
    ),
    (
        rf"^我{T}(?P<v>不再(?:是)?(?:吃素|吃肉|吃荤|吃葷|素食者|素食主义者|素食主義者)|(?:已经|已經)?不吃(?:素|肉|荤|葷|猪肉|豬肉|牛肉|海鲜|海鮮)|戒(?:肉|荤|葷))了?{END}$",
        attr_fact("diet", "identity", 8, "饮食"),
    ),
    (
        rf"^我{T}(?:习惯|習慣|常|总|總)?(?:只|都|也)?(?:都要)?喝(?!了|过|過|着|著)(?:(?:一|两|兩|二|三|几|幾|\d+)(?:杯|瓶|罐|壶|壺))?"
        rf"(?P<v>[^，,。！？!?；;不没沒]+?)(?:(?:而)?不喝[^，,]+)?{END}$",
        attr_fact("drink", "preference", 6, "饮品", is_drink),
        False,
    ),
    (rf"^我{T}(?:一|1)杯{V}{END}$", attr_fact("drink", "preference", 6, "饮品", is_drink), False),
    (
        rf"^我{T}(?:改|换成|換成|改成|换|換)(?:喝|了喝)(?:了)?{V}{END}$",
        attr_fact("drink", "preference", 6, "饮品", is_drink),
        False,
    ),
    (
        rf"^我(?:的)?(?:每天的|日常的?|常喝的|平时喝的|平時喝的)?(?:饮料|飲料|饮品|飲品)(?:是|就是){V}{END}$",
        each_fact("drink", "preference", 6, "饮品", is_drink),
    ),
    # allergies and conditions
    (
        rf"^我{T}(?:一)?(?:吃|喝|碰|接触|接觸)(?P<v>[^，,]+?)(?:就|会|會|都|也)+(?:严重|嚴重)?(?:过敏|過敏){END}$",
        each_fact("allergy", "identity", 9, "过敏", is_allergen),
    ),
    (
        rf"^我{T}(?:对|對)?{V}(?:严重|嚴重|有点|有點|有些|特别|特別|都)?(?:过敏|過敏){END}$",
        each_fact("allergy", "identity", 9, "过敏", is_allergen),
    ),
    (
        rf"^我{T}(?:有|患有|得了|查出来?(?:有|了)?|查出來?(?:有|了)?|确诊(?:了|为|為)?|確診(?:了|为|為)?|被诊断出?(?:有|了)?|"
        rf"是|一直有)(?:轻微的?|輕微的?|严重的?|嚴重的?|一点|一點|点|點|轻度|輕度|重度|中度|慢性)?{V}(?:的(?:老)?毛病)?"
        rf"(?:(?:{NUMBER}|好几|好幾|几|幾)年了?)?{END}$",
        each_fact("health", "identity", 8, "健康", is_condition),
        False,
    ),
    (
        rf"^我{T}(?P<v>[^，,]{{1,6}}(?:不耐受|不耐症)){END}$",
        attr_fact("health", "identity", 8, "健康", is_condition),
    ),
    # likes
    (
        rf"^{V}是我(?:的)?最(?:喜欢|喜歡|爱|愛)的[^，,]{{1,8}}{END}$",
        attr_fact("likes", "preference", 6, "喜好", clean=liked_value),
    ),
    (
        rf"^我(?:的)?(?:最)?(?:喜欢|喜歡|爱|愛)(?P<what>的|吃的|喝的|看的|听的|聽的)(?P<kind>[^，,是]{{0,8}})(?:是|就是){V}{END}$",
        favourite_fact,
    ),
    (
        rf"^我{T}(?P<neg>不|不太|一点都不|一點都不|一点也不|一點也不|并不|並不)?(?:超|很|非常|真的|特别|特別|最|也|还|還|"
        rf"比较|比較|更|一直|都|挺|蛮|蠻|超级|超級|相当|相當)*(?P<verb>喜欢|喜歡|爱|愛|热爱|熱愛|偏爱|偏愛|讨厌|討厭|"
        rf"受不了|反感|厌恶|厭惡|恨)(?!的){V}{END}$",
        likes_fact,
    ),
    (rf"^我(?:的)?(?:职业|職業|工作|本职|本職)(?:是|就是)(?P<job>[^，,]+?){END}$", work_fact),
    (
        rf"^我(?:的)?(?:爱好|愛好|兴趣|興趣)(?:是|就是){V}{END}$",
        attr_fact("likes", "preference", 6, "爱好", clean=liked_value),
    ),
    (
        rf"^我{T}是(?:个|個|一个|一個|一名)?{V}(?:重度|资深|資深|忠实|忠實|狂热|狂熱|死忠)?(?:爱好者|愛好者|控|迷|粉丝|粉絲|铁粉|鐵粉)$",
        fan_fact,
    ),
    # languages
    (
        rf"^我{T}(?:会|會|能)(?:说|說|讲|講)(?:一点|一點|一些|点|點|几句|幾句|流利的|流利地)?{V}{END}$",
        each_fact("speaks", "skill", 6, "语言", is_language),
    ),
    (
        rf"^我{T}{V}(?:都|也)?(?:说|說|讲|講)得(?:很|挺|非常|还|還|比较|比較|特别|特別)?(?:流利|好|不错|不錯|溜|地道){END}$",
        each_fact("speaks", "skill", 6, "语言", is_language),
    ),
    (
        rf"^我(?:的)?(?:母语|母語|第一语言|第一語言)(?:是){V}{END}$",
        each_fact("speaks", "skill", 7, "母语", is_language),
    ),
    (
        rf"^我{T}(?:会|會|懂)(?:一点|一點|一些|点|點|几句|幾句)?{V}{END}$",
        each_fact("speaks", "skill", 6, "语言", is_language),
        False,
    ),
    (
        rf"^我{T}{V}(?:很|挺|非常|还|還|比较|比較|特别|特別|相当|相當)?(?:好|流利|不错|不錯|溜|地道){END}$",
        each_fact("speaks", "skill", 6, "语言", is_language),
        False,
    ),
    (
        rf"^(?:请|請|麻烦|麻煩)?(?:你|您)?(?:以后|以後)?(?:都|统一|統一|全部|一律)?(?:用|使用|以|改用){V}(?:来|來)?(?:回复|回覆|"
        rf"回答|答复|答覆|回|交流|沟通|溝通|和我说话?|跟我说话?|跟我說話?|和我說話?|跟我聊|和我聊|说话|說話|写|寫|聊天?)(?:我)?"
        rf"{PARTICLE}$",
        language_fact,
    ),
    (
        rf"^(?:回复|回覆|回答)(?:请|請)?(?:都|统一|統一|一律|全部)?(?:用|使用){V}{PARTICLE}$",
        language_fact,
    ),
    # a plan's date
    (
        rf"^(?P<plan>[^，,]{{0,8}}?(?:婚礼|婚禮|聚会|聚會|旅行|旅游|旅遊|之旅|搬家|年会|年會|毕业典礼|畢業典禮|典礼|典禮|面试|"
        rf"面試|考试|考試|手术|手術|会议|會議|派对|派對|生日会|生日會|演唱会|演唱會|婚宴|答辩|答辯|体检|體檢|尾牙|春游|"
        rf"秋游|团建|團建|发布会|發佈會|出游|出遊|露营|露營|野餐|聚餐|烧烤|燒烤|烤肉|婚纱照|婚紗照|"
        rf"演出|比赛|比賽|马拉松|馬拉松|音乐会|音樂會|展览|展覽|讲座|講座|培训|培訓|面签|面簽|复查|複查|复诊|複診|产检|產檢|"
        rf"同学会|同學會|家长会|家長會|蜜月|自驾游|自駕遊|郊游|郊遊|派對|活动|活動))(?:改到了?|改在|改成|定在了?|定于|定於|安排在|推迟到|推遲到|提前到|"
        rf"延期到|挪到|约在|約在|订在|訂在|在|是)?(?P<date>{DATE})(?:出发|出發|举行|舉行|举办|舉辦|开始|開始|办|辦)?{END}$",
        plan_date_fact,
    ),
)
