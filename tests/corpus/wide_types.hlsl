// 64-bit integers and doubles, and 16-bit integers: SPIR-V only (WGSL has no 64-bit or 16-bit
// integers, Metal no double).
struct Wide
{
    uint64_t Counter;
    int64_t Delta;
    double Precise;
    uint16_t Small;
    int16_t SmallSigned;
    uint Pad;
};

RWStructuredBuffer<Wide> Values;

[shader("compute")]
[numthreads(32, 1, 1)]
void Accumulate(uint3 id : SV_DispatchThreadID)
{
    Wide w = Values[id.x];
    w.Counter += (uint64_t)w.Delta;
    w.Precise = w.Precise * 0.5 + (double)w.Counter;
    w.Small = (uint16_t)(w.Small + (uint16_t)1);
    w.SmallSigned = (int16_t)(w.SmallSigned - (int16_t)1);
    Values[id.x] = w;
}
