// 16-bit floats in a storage buffer and in arithmetic; min16float is accepted as DXC accepts it.
struct HalfData
{
    half4 Color;
    half2 Uv;
    half Weight;
    half Pad;
};

StructuredBuffer<HalfData> Input;
RWStructuredBuffer<float4> Output;

[shader("compute")]
[numthreads(64, 1, 1)]
void Convert(uint3 id : SV_DispatchThreadID)
{
    HalfData d = Input[id.x];
    min16float w = (min16float)d.Weight;
    half4 c = d.Color * (half)w + half4(d.Uv, 0.0h, 1.0h);
    Output[id.x] = float4(c);
}
