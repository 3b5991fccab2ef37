// A texture+sampler pair read in the vertex stage (terrain displacement).
Texture2D<float> heightMap : register(t0);
SamplerState heightSampler : register(s0);

cbuffer Terrain : register(b1)
{
    float4x4 viewProj;
    float4 scale;
};

struct VSOutput
{
    float4 position : SV_Position;
    float height : TEXCOORD0;
};

VSOutput main(float2 grid : POSITION)
{
    VSOutput o;
    float h = heightMap.SampleLevel(heightSampler, grid * scale.xy, 0);
    o.position = mul(viewProj, float4(grid.x, h * scale.z, grid.y, 1.0));
    o.height = h;
    return o;
}
